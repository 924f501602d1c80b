/**
 * The public surface is written down (docs/design/api.md) and reviewed (docs/design/api-report.d.ts).
 * For every entry of package.json `exports`, the BUILT package's runtime export names must equal the bullets of
 * api.md, its type-only exports the `Types:` line, and the generated API report must equal the checked-in one.
 * After changing an export: update api.md and run `npm run api:report`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPORT_PATH, buildReport, entries, exportNames } from '../scripts/api-report.js';

const ROOT = resolve(__dirname, '..');
/** The built entry files this test reads (`npm test` builds them first; alone, run `npm run build`). */
function assertBuilt(): void {
  const missing = ['dist/index.js', 'dist/index.d.ts'].filter((f) => !existsSync(resolve(ROOT, f)));
  if (missing.length)
    throw new Error(
      `The public API is checked against the built package, which is missing (${missing.join(', ')}): run \`npm run build\` first (npm test does).`,
    );
}

/** api.md → entry name (`utcp-kit/agent`) → { runtime, types }. */
function documented(): Map<string, { runtime: string[]; types: string[] }> {
  const text = readFileSync(resolve(ROOT, 'docs/design/api.md'), 'utf8');
  const out = new Map<string, { runtime: string[]; types: string[] }>();
  for (const section of text.split(/^## /m).slice(1)) {
    const title = /^`([^`]+)`/.exec(section)?.[1];
    if (!title) continue;
    const runtime = [...section.matchAll(/^- `([^`]+)`/gm)].map((m) => m[1]).sort();
    const typesLine = /^Types:(.*)$/m.exec(section)?.[1] ?? '';
    const types = [...typesLine.matchAll(/`([^`]+)`/g)].map((m) => m[1]).sort();
    out.set(title, { runtime, types });
  }
  return out;
}

const entryName = (subpath: string) => (subpath === '.' ? 'utcp-kit' : `utcp-kit/${subpath.slice(2)}`);

describe('public API', () => {
  beforeAll(assertBuilt);

  const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, string | Record<string, string>>;
  };

  it('every entry has types, import and default conditions (require() works where Node supports require(esm))', () => {
    const bad = Object.entries(pkg.exports)
      .filter(([k]) => k !== './package.json')
      .filter(([, v]) => typeof v !== 'object' || !v.types || !v.import || v.default !== v.import)
      .map(([k]) => k);
    expect(bad).toEqual([]);
  });

  it('api.md lists exactly the runtime and type exports of every entry of the built package', async () => {
    const doc = documented();
    const names = exportNames();
    const problems: string[] = [];
    for (const [subpath] of entries()) {
      const name = entryName(subpath);
      const target = pkg.exports[subpath] as Record<string, string>;
      const mod = (await import(pathToFileURL(resolve(ROOT, target.import)).href)) as Record<string, unknown>;
      const runtime = Object.keys(mod).sort();
      const types = (names.get(subpath) ?? []).filter((n) => !runtime.includes(n));
      const listed = doc.get(name);
      if (!listed) {
        problems.push(`${name}: no "## \`${name}\`" section in docs/design/api.md`);
        continue;
      }
      for (const n of runtime)
        if (!listed.runtime.includes(n)) problems.push(`${name}: runtime export ${n} is not listed`);
      for (const n of listed.runtime)
        if (!runtime.includes(n)) problems.push(`${name}: listed ${n} is not a runtime export`);
      for (const n of types)
        if (!listed.types.includes(n)) problems.push(`${name}: type export ${n} is not on the Types line`);
      for (const n of listed.types)
        if (!types.includes(n)) problems.push(`${name}: Types line lists ${n}, which is not a type export`);
    }
    for (const name of doc.keys())
      if (!entries().some(([s]) => entryName(s) === name))
        problems.push(`${name}: documented but not in package.json exports`);
    expect(problems).toEqual([]);
  }, 60_000);

  it('the checked-in API report matches the build (run `npm run api:report` and review the diff)', () => {
    // toEqual, so that a mismatch shows the diff of the two reports.
    expect(buildReport()).toEqual(readFileSync(REPORT_PATH, 'utf8'));
  }, 60_000);
});
