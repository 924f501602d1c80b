/**
 * Layout rules (docs/design/README.md#source-layout): one layout per transport folder, no two source files with the
 * same name, one home for each small helper, and undici only in the HTTP stack.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(__dirname, '../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const read = (file: string) => readFileSync(file, 'utf8');

describe('source layout', () => {
  it('every transport folder has index.ts (the factory), <type>-transport.ts (the transport) and template.ts', () => {
    const dir = join(SRC, 'transports');
    const folders = readdirSync(dir).filter((f) => f !== 'shared' && statSync(join(dir, f)).isDirectory());
    expect(folders.length).toBeGreaterThanOrEqual(13);
    const bad: string[] = [];
    for (const folder of folders) {
      const own = readdirSync(join(dir, folder));
      for (const name of ['index.ts', `${folder}-transport.ts`, 'template.ts'])
        if (!own.includes(name)) bad.push(`transports/${folder}: no ${name}`);
      if (!own.includes('index.ts') || !own.includes(`${folder}-transport.ts`)) continue;
      const index = read(join(dir, folder, 'index.ts'));
      if (!/export function create\w+Transport\(/.test(index))
        bad.push(`transports/${folder}/index.ts: no create…Transport factory`);
      if (/\bclass\s|\bcallTool\s*\(|\bregisterManual\s*\(/.test(index))
        bad.push(`transports/${folder}/index.ts: implements the transport (belongs in ${folder}-transport.ts)`);
      if (!index.includes(`from './${folder}-transport.js'`))
        bad.push(`transports/${folder}/index.ts: does not import ./${folder}-transport.js`);
      if (!/\bcallTool\s*\(/.test(read(join(dir, folder, `${folder}-transport.ts`))))
        bad.push(`transports/${folder}/${folder}-transport.ts: no callTool`);
    }
    expect(bad).toEqual([]);
  });

  it('no two files in src/ share a name (except the layout names index.ts and template.ts)', () => {
    // index.ts is each folder's entry and template.ts each transport's template spec: the folder names them, by
    // design. Any other name says what the file does, so two of them in different folders mean two meanings.
    const exempt = new Set(['index.ts', 'template.ts']);
    const byName = new Map<string, string[]>();
    for (const f of files(SRC)) {
      const name = basename(f);
      if (exempt.has(name)) continue;
      byName.set(name, [...(byName.get(name) ?? []), relative(SRC, f)]);
    }
    const twice = [...byName.values()].filter((paths) => paths.length > 1).map((paths) => paths.join(' = '));
    expect(twice).toEqual([]);
  });

  it('undici is imported only by the HTTP stack (src/http/); everything else goes through it', () => {
    const undici = /(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"]undici(?:\/[^'"]*)?['"]/;
    const outside = files(SRC)
      .map((f) => relative(SRC, f))
      .filter((f) => !f.startsWith('http/') && undici.test(read(join(SRC, f))));
    expect(outside).toEqual([]);
    expect(files(join(SRC, 'http')).some((f) => undici.test(read(f)))).toBe(true);
  });

  it('one home per small helper: no copy of isPlainObject or errorMessage outside src/core/guards.ts', () => {
    const copies: [string, RegExp][] = [
      // a function or arrow whose whole body is the plain-object check, under any name
      [
        'a plain-object check',
        /(?:function \w+\((\w+): unknown\)[^{]*\{\s*return typeof \1 === 'object' && \1 !== null && !Array\.isArray\(\1\);?\s*\}|\((\w+): unknown\)[^=]*=> typeof \2 === 'object' && \2 !== null && !Array\.isArray\(\2\))/,
      ],
      ['a function named like the helpers', /\b(?:function|const) (?:isPlainObject|isRecord|messageOf|errorMessage)\b/],
      ['the inline error-message expression', /(\w+) instanceof Error \? \1\.message : String\(\1\)/],
    ];
    const bad: string[] = [];
    for (const f of files(SRC)) {
      const path = relative(SRC, f);
      if (path === 'core/guards.ts') continue;
      const text = read(f);
      for (const [what, pattern] of copies) if (pattern.test(text)) bad.push(`${path}: ${what}`);
    }
    expect(bad).toEqual([]);
  });
});
