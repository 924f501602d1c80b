/** Runs the built `utcp` CLI (dist/cli/main.js) in a folder, with a minimal environment and no colour. */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';

const BIN = resolve(__dirname, '../../dist/cli/main.js');

export function runCli(
  args: string[],
  cwd: string,
  timeoutMs = 20_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1' }, timeout: timeoutMs },
      (error, stdout, stderr) => {
        done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}
