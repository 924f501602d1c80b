/**
 * Code comments explain "why" by citing docs/design pages (docs/design/README.md). This test fails when a cited page
 * or anchor does not exist, when a comment still cites the old out-of-repo notes by section number, and when a link
 * between docs pages is broken.
 */
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '..');
const SCANNED = ['src', 'test', 'bench', 'examples', 'scripts'];

function files(dir: string, exts: string[]): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (f === 'node_modules' || f === 'dist') return [];
    return statSync(p).isDirectory() ? files(p, exts) : exts.some((e) => p.endsWith(e)) ? [p] : [];
  });
}

/** GitHub's heading slug: lowercase, punctuation dropped (except `-` and `_`), spaces to `-`. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let set = anchorCache.get(file);
  if (!set) {
    const text = readFileSync(file, 'utf8');
    set = new Set<string>();
    for (const m of text.matchAll(/<a id="([^"]+)"><\/a>/g)) set.add(m[1]);
    for (const m of text.matchAll(/^#{1,6}\s+(.+)$/gm)) set.add(slug(m[1]));
    anchorCache.set(file, set);
  }
  return set;
}

/** Checks one `docs/...md#anchor` reference relative to `base`; returns a problem or undefined. */
function check(base: string, target: string): string | undefined {
  const [path, anchor] = target.split('#');
  const file = resolve(base, path);
  if (!existsSync(file)) return `${path}: no such file`;
  if (anchor && !anchorsOf(file).has(anchor)) return `${path}#${anchor}: no such anchor`;
  return undefined;
}

// Built from parts so this file does not match itself.
const OLD_NOTES = new RegExp(['(protocols|security|openapi|manual-format)\\.md\\s*', '§'].join(''));
const OUTSIDE = new RegExp(['shared', '/reference'].join(''));

describe('docs citations', () => {
  const sources = SCANNED.flatMap((d) => files(join(ROOT, d), ['.ts', '.mjs', '.js'])).filter((f) => f !== __filename);

  it('every docs/...md#anchor cited in code exists', () => {
    const bad: string[] = [];
    for (const f of sources) {
      const text = readFileSync(f, 'utf8');
      for (const m of text.matchAll(/\bdocs\/[A-Za-z0-9_./-]+\.md(?:#[A-Za-z0-9_-]+)?/g)) {
        const problem = check(ROOT, m[0]);
        if (problem) bad.push(`${relative(ROOT, f)}: ${problem}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('no comment cites the old notes by section number or a path outside the repository', () => {
    const bad = sources
      .filter((f) => {
        const text = readFileSync(f, 'utf8');
        return OLD_NOTES.test(text) || OUTSIDE.test(text);
      })
      .map((f) => relative(ROOT, f));
    expect(bad).toEqual([]);
  });

  it('links between docs pages resolve', () => {
    const bad: string[] = [];
    for (const f of files(join(ROOT, 'docs'), ['.md'])) {
      const text = readFileSync(f, 'utf8');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1];
        if (/^[a-z]+:/.test(target)) continue; // external
        const problem = target.startsWith('#')
          ? check(dirname(f), `${relative(dirname(f), f)}${target}`)
          : check(dirname(f), target);
        if (problem) bad.push(`${relative(ROOT, f)}: ${problem}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('finds the anchors it checks (sanity)', () => {
    expect(check(ROOT, 'docs/design/transports.md#http')).toBeUndefined();
    expect(check(ROOT, 'docs/design/transports.md#no-such-anchor')).toMatch(/no such anchor/);
    expect(check(ROOT, 'docs/design/nope.md')).toMatch(/no such file/);
  });
});
