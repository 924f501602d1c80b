import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { lastToolResult, startScriptedOpenAIServer, type ScriptStep } from '../fixtures/llm/scripted-openai-server.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
/**
 * Each test starts one example child through tsx, which takes seconds on a loaded machine: its deadline (it kills the
 * child and reports what it printed) stays below the tests' own timeout, so a slow run fails with that report.
 */
const RUN_DEADLINE_MS = 45_000;
const TEST_TIMEOUT_MS = 60_000;

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `npm run example -- agent-chat ...` (without npm) and collects its output. */
function runChat(args: string[], env: Record<string, string>, stdin = ''): Promise<RunResult> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OPENAI|ANTHROPIC)_/.test(k)));
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/run.ts', 'agent-chat', ...args], {
    cwd: repoRoot,
    env: { ...clean, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(stdin);
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`agent-chat did not exit within ${RUN_DEADLINE_MS} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, RUN_DEADLINE_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A local weather API and a UTCP manual file describing it. */
async function weatherManual() {
  const received: string[] = [];
  const api = createServer((req, res) => {
    received.push(`${req.method} ${req.url}`);
    const m = /^\/weather\/([^/?]+)$/.exec(req.url ?? '');
    if (m && decodeURIComponent(m[1]) === 'Paris') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ city: 'Paris', temp_c: 14, sky: 'light rain' }));
    } else {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'unknown city' }));
    }
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        api.close(() => resolve());
        api.closeAllConnections();
      }),
  );
  const base = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  const dir = await mkdtemp(join(tmpdir(), 'agent-chat-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'weather.json');
  await writeFile(
    path,
    JSON.stringify({
      utcp_version: '1.0.1',
      manual_version: '1.0.0',
      tools: [
        {
          name: 'current_weather',
          description: 'Current weather for a city',
          inputs: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          tool_call_template: { call_template_type: 'http', url: `${base}/weather/{city}`, http_method: 'GET' },
        },
      ],
    }),
  );
  return { path, received, dir };
}

async function llm(steps: ScriptStep[]) {
  const server = await startScriptedOpenAIServer(steps);
  onTestFinished(() => server.close());
  return { server, env: { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'test-key', OPENAI_MODEL: 'scripted' } };
}

const callWeather =
  (city: string): ScriptStep =>
  (request) => {
    if (!request.tools?.some((t) => t.function.name === 'weather__current_weather'))
      throw new Error('weather tool not offered');
    return { toolCalls: [{ name: 'weather__current_weather', arguments: { city } }] };
  };

describe('agent-chat example', { timeout: TEST_TIMEOUT_MS }, () => {
  it('runs one turn with --prompt: tool call on stderr, answer on stdout', async () => {
    const manual = await weatherManual();
    const { server, env } = await llm([
      callWeather('Paris'),
      (request) => {
        const result = lastToolResult(request);
        if (!result.includes('"temp_c":14')) throw new Error(`unexpected tool result ${result}`);
        return { text: 'It is 14 °C with light rain in Paris.' };
      },
    ]);
    const run = await runChat(['--prompt', 'Weather in Paris?', '--yes', manual.path], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('It is 14 °C with light rain in Paris.\n');
    const lines = run.stderr.split('\n');
    expect(lines).toContain('Loaded weather: 1 tools from ' + manual.path);
    expect(lines).toContain('→ weather.current_weather({"city":"Paris"})');
    expect(lines.some((l) => /^✓ weather\.current_weather \(\d+ ms\)$/.test(l))).toBe(true);
    expect(manual.received).toEqual(['GET /weather/Paris']);
    expect(server.errors).toEqual([]);
    expect(server.pendingSteps()).toBe(0);
    expect(server.authorizations).toEqual(['Bearer test-key', 'Bearer test-key']);
    expect(server.requests[0].model).toBe('scripted');
    expect(server.requests[0].messages.at(-1)).toEqual({ role: 'user', content: 'Weather in Paris?' });
  });

  it('shows a failing tool as × with the reason and lets the model answer', async () => {
    const manual = await weatherManual();
    const { server, env } = await llm([
      callWeather('Atlantis'),
      (request) => {
        if (!lastToolResult(request).includes('404')) throw new Error('the model was not told about the 404');
        return { text: 'I could not find Atlantis.' };
      },
    ]);
    const run = await runChat(['-p', 'Weather in Atlantis?', '-y', manual.path], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('I could not find Atlantis.\n');
    expect(run.stderr).toMatch(/^× weather\.current_weather failed: .*404.*$/m);
    expect(manual.received).toEqual(['GET /weather/Atlantis']);
    expect(server.errors).toEqual([]);
  });

  it('denies calls that need approval when stdin is not a terminal', async () => {
    const manual = await weatherManual();
    const { server, env } = await llm([
      callWeather('Paris'),
      (request) => {
        if (!lastToolResult(request).includes('stdin is not a terminal')) throw new Error('the model was not told why');
        return { text: 'I was not allowed to look it up.' };
      },
    ]);
    const run = await runChat(['--prompt', 'Weather in Paris?', manual.path], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('I was not allowed to look it up.\n');
    expect(run.stderr).toContain(
      '× weather.current_weather denied: needs approval, but stdin is not a terminal; rerun with --yes to allow it',
    );
    expect(manual.received).toEqual([]);
    expect(server.errors).toEqual([]);
  });

  it('runs tools matching --allow without asking', async () => {
    const manual = await weatherManual();
    const { env } = await llm([callWeather('Paris'), { text: 'done' }]);
    const run = await runChat(['--prompt', 'Weather?', '--allow', 'weather.*', manual.path], env);
    expect(run.code).toBe(0);
    expect(manual.received).toEqual(['GET /weather/Paris']);
  });

  it('answers one turn per input line when stdin is piped', async () => {
    const manual = await weatherManual();
    const { server, env } = await llm([
      { text: 'first answer' },
      (request) => {
        // The second turn carries the whole conversation.
        const roles = request.messages.map((m) => `${m.role}:${typeof m.content === 'string' ? m.content : ''}`);
        if (
          roles.join('|') !==
          'system:You are a helpful assistant. Use the tools when they help; say which tool an answer came from.|user:hello|assistant:first answer|user:again'
        ) {
          throw new Error(`unexpected conversation ${roles.join('|')}`);
        }
        return { text: 'second answer' };
      },
    ]);
    const run = await runChat([manual.path], env, 'hello\nagain\n');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('first answer\nsecond answer\n');
    expect(server.errors).toEqual([]);
  });

  it('exits 1 with the error on stderr when the model request fails', async () => {
    const manual = await weatherManual();
    const { env } = await llm([]);
    const run = await runChat(['--prompt', 'hi', manual.path], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^error: .*500.*$/m);
    expect(run.stderr).not.toContain('test-key');
  });

  it('exits 1 when a manual fails to register', async () => {
    const manual = await weatherManual();
    const broken = join(manual.dir, 'broken.json');
    await writeFile(broken, '{"tools": "not a list"}');
    const { server, env } = await llm([]);
    const run = await runChat(['--prompt', 'hi', broken], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^× manual broken \(.*broken\.json\) failed to register: /m);
    expect(server.requests).toEqual([]);
  });

  it('exits 2 and explains the environment when no model is configured', async () => {
    const manual = await weatherManual();
    const run = await runChat(['--prompt', 'hi', manual.path], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('No model configured.');
    expect(run.stderr).toContain('OPENAI_BASE_URL');
  });

  it('runs offline with --demo', async () => {
    const run = await runChat(['--demo', '--yes'], {});
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      '(scripted demo model) The weather tool answered: {"city":"Paris","temp_c":14,"sky":"light rain"}\n',
    );
    expect(run.stderr).toContain('→ demo.current_weather({"city":"Paris"})');
  });
});
