/**
 * Small things a newcomer trips on (#26 item 17), through the built CLI: a misspelt config key or template type says
 * so with a "did you mean", `--json` errors spell every key one way, `inspect` names a file source as a file, an
 * unknown option gets a balanced message with the closest option, and `convert -o` into a missing directory says
 * which directory is missing.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const BIN = resolve(ROOT, 'dist/cli/main.js');
let dir = '';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'utcp-newcomer-'));
  copyFileSync(resolve(__dirname, '../fixtures/cli-sources/greet.json'), join(dir, 'greet.json'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[], cwd = dir): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) =>
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, env: { PATH: process.env.PATH!, HOME: dir, NO_COLOR: '1' }, timeout: 30_000 },
      (error, stdout, stderr) =>
        done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    ),
  );
}

describe('what a newcomer meets', () => {
  it('a misspelt config key and template type are named at once, with a did-you-mean', async () => {
    const sub = join(dir, 'typos');
    rmSync(sub, { recursive: true, force: true });
    mkdtempSync(join(dir, 'x-')); // unrelated sibling: the config below is the only one in `sub`
    const { mkdirSync } = await import('node:fs');
    mkdirSync(sub);
    writeFileSync(
      join(sub, 'utcp.config.json'),
      JSON.stringify({
        varibles: { x_KEY: '1' },
        manual_call_templates: [{ name: 'x', call_template_type: 'htp', url: 'https://example.com/m.json' }],
      }),
    );
    const r = await run(['tools'], sub);
    expect(r.stderr).toContain('Unknown config key "varibles" ignored (did you mean "variables"?)');
    expect(r.stderr).toContain('unknown call_template_type "htp" (did you mean "http"?)');
  });

  it('--json errors spell their keys one way: the tool exit status is tool_exit_code, utcp exit status exit_code', async () => {
    const r = await run(['call', 'greet.fail', 'greet.json', '--json']);
    expect(r.code).toBe(1);
    const { error } = JSON.parse(r.stdout);
    expect(error).toMatchObject({ code: 'PROCESS_EXIT', tool_exit_code: 3, exit_code: 1 });
    expect(error).not.toHaveProperty('exitCode');
    const missing = JSON.parse((await run(['call', 'greet.nope', 'greet.json', '--json'])).stdout).error;
    expect(missing).toMatchObject({ code: 'TOOL_NOT_FOUND', tool_name: 'greet.nope' });
    expect(missing).not.toHaveProperty('toolName');
  });

  it('inspect names a file source as the file it is, not "(text)"', async () => {
    const r = await run(['inspect', 'greet.json']);
    expect(r.stdout).toMatch(/greet \(file greet\.json\)/);
    expect(r.stdout).not.toContain('(text)');
  });

  it('an unknown option gets one balanced message with the closest option', async () => {
    const r = await run(['tools', 'greet.json', '--jsn']);
    expect(r.code).toBe(2);
    const line = r.stderr.split('\n')[0];
    expect(line).toBe(
      'error: Unknown option --jsn (did you mean --json?); a value that starts with "-" goes after "--": utcp tools -- --jsn',
    );
    expect((line.match(/"/g) ?? []).length % 2).toBe(0);
    expect((line.match(/'/g) ?? []).length % 2).toBe(0);
  });

  it('convert -o into a missing directory says which directory, not a raw ENOENT', async () => {
    const spec = resolve(__dirname, '../fixtures/openapi/shop-3.0.json');
    const r = await run(['convert', spec, '-o', join(dir, 'missing', 'x.json')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`the directory ${join(dir, 'missing')} does not exist`);
    expect(r.stderr).not.toContain('ENOENT');
  });
});
