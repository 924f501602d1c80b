/**
 * `utcp chat` speaks each model API it offers (OpenAI Chat Completions, the Responses API, Anthropic, Gemini), chosen
 * by --provider / UTCP_CHAT_PROVIDER or by the variables set, against local replicas of each wire format (JSON and
 * streaming). Runs the built binary.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startLlmServer } from '../agent/helpers/llm-server.js';
import { PROVIDERS, replyFor, type Provider } from '../agent/helpers/provider-replicas.js';

const BIN = resolve(__dirname, '../../dist/cli/main.js');
const FIXTURES = resolve(__dirname, '../fixtures/cli-sources');
const KEY = 'chat-key-0123456789';
/** Each test spawns the CLI (one or two processes): generous for a loaded machine. */
const SLOW = 60_000;

function run(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: FIXTURES,
        env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1', ...env },
        timeout: 30_000,
      },
      (error, stdout, stderr) =>
        done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** The variables that point each provider at the replica. */
function envFor(provider: Provider, url: string): Record<string, string> {
  switch (provider) {
    case 'openai':
    case 'responses':
      return { OPENAI_BASE_URL: `${url}/v1`, OPENAI_API_KEY: KEY, OPENAI_MODEL: 'gpt-test' };
    case 'anthropic':
      return { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: KEY, ANTHROPIC_MODEL: 'claude-test' };
    case 'gemini':
      return { GEMINI_BASE_URL: `${url}/v1beta`, GEMINI_API_KEY: KEY, GEMINI_MODEL: 'gemini-test' };
  }
}

const PATHS: Record<Provider, [string, string]> = {
  openai: ['/v1/chat/completions', '/v1/chat/completions'],
  responses: ['/v1/responses', '/v1/responses'],
  anthropic: ['/v1/messages', '/v1/messages'],
  gemini: ['/v1beta/models/gemini-test:generateContent', '/v1beta/models/gemini-test:streamGenerateContent?alt=sse'],
};

function keyHeader(provider: Provider, headers: Record<string, unknown>): unknown {
  if (provider === 'anthropic') return headers['x-api-key'];
  if (provider === 'gemini') return headers['x-goog-api-key'];
  return headers.authorization;
}

describe.each(PROVIDERS)('utcp chat --provider %s', (provider) => {
  it.each([false, true])(
    'calls a tool and answers (stream: %s)',
    async (stream) => {
      const llm = await startLlmServer([
        replyFor(provider, { calls: [{ id: 'call_1', name: 'greet__greet', args: { who: 'Ada' } }] }, stream),
        replyFor(provider, { text: 'Hello, Ada!' }, stream),
      ]);
      onTestFinished(() => llm.close());
      const args = ['chat', 'greet.json', '--provider', provider, '--prompt', 'Greet Ada', '--yes'];
      const r = await run(stream ? [...args, '--stream'] : args, envFor(provider, llm.url));
      expect(r.stderr).toContain('→ greet.greet({"who":"Ada"})');
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe('Hello, Ada!');
      expect(llm.requests.map((q) => q.path)).toEqual([
        PATHS[provider][stream ? 1 : 0],
        PATHS[provider][stream ? 1 : 0],
      ]);
      expect(keyHeader(provider, llm.requests[0].headers)).toContain(KEY);
      // The tool's output went back to the model in the second request.
      expect(JSON.stringify(llm.requests[1].body)).toContain('hello Ada');
      expect(r.stderr).not.toContain(KEY);
    },
    SLOW,
  );
});

describe('utcp chat provider selection', () => {
  it(
    'UTCP_CHAT_PROVIDER picks the API; the variables set pick it otherwise',
    async () => {
      const llm = await startLlmServer([
        replyFor('responses', { text: 'via responses' }, false),
        replyFor('gemini', { text: 'via gemini' }, false),
      ]);
      onTestFinished(() => llm.close());
      const a = await run(['chat', 'greet.json', '--prompt', 'hi'], {
        ...envFor('responses', llm.url),
        UTCP_CHAT_PROVIDER: 'responses',
      });
      expect(a.stdout.trim()).toBe('via responses');
      const b = await run(['chat', 'greet.json', '--prompt', 'hi'], envFor('gemini', llm.url));
      expect(b.stdout.trim()).toBe('via gemini');
      expect(llm.requests.map((q) => q.path)).toEqual(['/v1/responses', '/v1beta/models/gemini-test:generateContent']);
    },
    SLOW,
  );

  it(
    'names the valid providers and the missing variable',
    async () => {
      const bad = await run(['chat', 'greet.json', '--provider', 'mistral', '--prompt', 'hi'], {});
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--provider must be one of openai, responses, anthropic, gemini');
      const missing = await run(['chat', 'greet.json', '--provider', 'gemini', '--prompt', 'hi'], {});
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('GEMINI_API_KEY');
    },
    SLOW,
  );

  it(
    'documents every provider in --help',
    async () => {
      const r = await run(['chat', '--help'], {});
      expect(r.code).toBe(0);
      for (const text of [
        '--provider',
        'responses',
        'GEMINI_API_KEY',
        'ANTHROPIC_API_KEY',
        'OPENAI_BASE_URL',
        '--stream',
      ])
        expect(r.stdout + r.stderr).toContain(text);
    },
    SLOW,
  );
});
