/** `npm start` is the first thing a new user runs: it must keep working, offline, and exit on its own. */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { expect, it } from 'vitest';

it('npm start tours loading, searching and calling tools across protocols, then exits 0', async () => {
  const root = resolve(__dirname, '../..');
  const { code, stdout } = await new Promise<{ code: number; stdout: string }>((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'examples/demo/main.ts'],
      { cwd: root, timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } },
      (error, stdout) => done({ code: error ? Number(error.code ?? 1) : 0, stdout }),
    );
  });
  expect(code).toBe(0);
  for (const source of [
    'UTCP manual over HTTP',
    'OpenAPI 3 spec over HTTP',
    'command-line tool',
    'MCP server (stdio)',
    'in-process functions',
  ]) {
    expect(stdout).toMatch(new RegExp(`✓ ${source.replace(/[()]/g, '\\$&')}\\s+\\d+ tool`));
  }
  expect(stdout).toContain('→ {"city":"paris","temp_c":14,"sky":"light rain"}');
  expect(stdout).toContain('→ {"id":2,"name":"Tom","species":"cat"}');
  expect(stdout).toContain('→ "6"');
  expect(stdout).toContain('The sum of 2 and 40 is 42.');
  expect(stdout).toContain('× Invalid arguments for weather.current_weather: city: required');
  expect(stdout).toMatch(/× HTTP 404 .*: unknown city atlantis/);
}, 90_000);
