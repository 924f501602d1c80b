/**
 * `utcp chat` stops on Ctrl-C at any point: while a model request is pending (SIGINT to a non-TTY child) and at an
 * approval prompt on a terminal (a pty through util-linux `script`, Ctrl-C typed as the user would), and while a tool
 * call runs. Runs the built binary.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openAIToolCalls, startLlmServer } from '../agent/helpers/llm-server.js';

const BIN = resolve(__dirname, '../../dist/cli/main.js');
const FIXTURES = resolve(__dirname, '../fixtures/cli-sources');
const env = (llmUrl: string) => ({
  PATH: process.env.PATH!,
  HOME: process.env.HOME ?? '/tmp',
  NO_COLOR: '1',
  OPENAI_BASE_URL: `${llmUrl}/v1`,
  OPENAI_API_KEY: 'test-key',
});

function hasScript(): boolean {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Resolves when `text` has appeared in what `read()` returns, checking on each chunk of output. */
function waitForOutput(stream: NodeJS.ReadableStream, text: string, seen: { out: string }): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (seen.out.includes(text)) {
        stream.off('data', onData);
        resolve();
      }
    };
    const onData = (d: Buffer) => ((seen.out += d.toString()), check());
    stream.on('data', onData);
    check();
  });
}

describe('utcp chat interrupted', () => {
  it('SIGINT while the model request is pending ends the run and exits 130', async () => {
    const llm = await startLlmServer([{ hold: true }]);
    onTestFinished(() => llm.close());
    const child = spawn(process.execPath, [BIN, 'chat', 'greet.json', '--prompt', 'Say hello'], {
      cwd: FIXTURES,
      env: env(llm.url),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    onTestFinished(() => void child.kill('SIGKILL'));
    const seen = { out: '' };
    child.stderr.on('data', (d) => (seen.out += d));
    await llm.waitForRequests(1);
    const t0 = performance.now();
    child.kill('SIGINT');
    const [code] = await once(child, 'exit');
    expect(code).toBe(130);
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(seen.out).toContain('(interrupted)');
  });

  it('SIGINT while a tool call runs ends the run and exits 130, without asking the model again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'utcp-chat-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(
      join(dir, 'slow.json'),
      JSON.stringify({
        tools: [
          {
            name: 'wait',
            description: 'Takes a long time',
            inputs: { type: 'object', properties: {} },
            tool_call_template: { call_template_type: 'cli', commands: [{ command: 'sleep 60' }] },
          },
        ],
      }),
    );
    const llm = await startLlmServer([openAIToolCalls([{ id: 'call_1', name: 'slow__wait', arguments: '{}' }])]);
    onTestFinished(() => llm.close());
    const child = spawn(process.execPath, [BIN, 'chat', 'slow.json', '--prompt', 'Wait', '--yes'], {
      cwd: dir,
      env: env(llm.url),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    onTestFinished(() => void child.kill('SIGKILL'));
    const seen = { out: '' };
    await waitForOutput(child.stderr, '→ slow.wait', seen);
    child.stderr.on('data', (d) => (seen.out += d));
    const t0 = performance.now();
    child.kill('SIGINT');
    const [code] = await once(child, 'exit');
    expect(code).toBe(130);
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(seen.out).toContain('(interrupted)');
    expect(llm.requests).toHaveLength(1);
  });

  it.skipIf(!hasScript())('Ctrl-C at an approval prompt on a terminal ends the run and exits 130', async () => {
    const llm = await startLlmServer([
      openAIToolCalls([{ id: 'call_1', name: 'greet__greet', arguments: '{"who":"Ada"}' }]),
    ]);
    onTestFinished(() => llm.close());
    const command = [process.execPath, BIN, 'chat', 'greet.json'].map((a) => `'${a}'`).join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: FIXTURES,
      env: { ...env(llm.url), TERM: 'dumb' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    onTestFinished(() => void child.kill('SIGKILL'));
    const seen = { out: '' };
    await waitForOutput(child.stdout, 'you', seen);
    child.stdin.write('Say hello to Ada\r');
    await waitForOutput(child.stdout, 'allow greet.greet', seen);
    const t0 = performance.now();
    child.stdin.write('\x03');
    const [code] = await once(child, 'exit');
    expect(code).toBe(130);
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(seen.out).not.toContain('Hello'); // the tool never ran
    expect(llm.requests).toHaveLength(1);
  });
});
