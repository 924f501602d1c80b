/**
 * Threat model (docs/design/threat-model.md#redaction, #one-pass-substitution, #cli-secrets): a substituted
 * secret never appears in an error or a log line, wherever it landed (URL path, query, header, redirect
 * target, CLI output); it is substituted in one pass (a `$NAME` inside it stays literal, and no error shows a
 * part of it); and a secret in a CLI command travels through the environment, never in the script text.
 * Everything through the public API, against a real local HTTP server and a real bash.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UtcpClient, UtcpError } from './packed.js';
import { tempDir } from '../fixtures/cli/harness.js';

const TOKEN = 'tok-7f3a9c2e1b-secret';
const HOSTILE = 'pw$HOME_x${NOPE}$(id)-literal';

let server: Server;
let port: number;
const logs: string[] = [];
const logger = Object.fromEntries(
  (['debug', 'info', 'warn', 'error'] as const).map((level) => [
    level,
    (message: string, data?: unknown) => logs.push(`${level} ${message} ${JSON.stringify(data ?? {})}`),
  ]),
) as never;

beforeAll(async () => {
  // Echoes everything it was sent in an error body, and redirects /hop to a URL with the path it got.
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.url?.startsWith('/hop')) {
        res.writeHead(302, { location: `/nowhere${req.url}` }).end();
        return;
      }
      res
        .writeHead(500, { 'content-type': 'text/plain' })
        .end(`failed: ${req.method} ${req.url} ${JSON.stringify(req.headers)} ${body}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function expectNoSecret(text: string, secret = TOKEN) {
  expect(text).not.toContain(secret);
  expect(text).not.toContain(encodeURIComponent(secret));
  for (let i = 0; i + 8 <= secret.length; i++)
    expect(text, `part of the secret at ${i}`).not.toContain(secret.slice(i, i + 8));
}

function describeError(e: unknown): string {
  const parts: string[] = [];
  for (
    let x = e as Record<string, unknown> | undefined, n = 0;
    x && n < 5;
    x = x.cause as Record<string, unknown> | undefined, n++
  ) {
    parts.push(
      String(x.message),
      String(x.stack),
      JSON.stringify(
        x,
        Object.getOwnPropertyNames(x).filter((k) => k !== 'cause'),
      ),
    );
  }
  return parts.join('\n');
}

describe('secrets in errors and logs', () => {
  it('a token in the URL path, the query and a header is redacted from the error and every log line', async () => {
    logs.length = 0;
    const dir = await tempDir();
    const client = await UtcpClient.create({ variables: { m_TOKEN: TOKEN } }, { rootDir: dir, logger });
    const template = (path: string) => ({
      call_template_type: 'http',
      http_method: 'POST',
      url: `http://127.0.0.1:${port}${path}`,
      headers: { 'X-Token': '${TOKEN}' },
    });
    const tools = [
      {
        name: 'send',
        description: '',
        inputs: { type: 'object', properties: { body: { type: 'string' } } },
        tool_call_template: template('/bot${TOKEN}/send?key=${TOKEN}'),
      },
      {
        name: 'hop',
        description: '',
        inputs: { type: 'object', properties: {} },
        tool_call_template: template('/hop/bot${TOKEN}'),
      },
    ];
    const r = await client.registerManual({
      name: 'm',
      call_template_type: 'text',
      content: JSON.stringify({ tools }),
      allowed_communication_protocols: ['http'],
    });
    expect(r.errors).toEqual([]);
    for (const tool of ['m.send', 'm.hop']) {
      const error = await client.callTool(tool, { body: 'hello' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(UtcpError);
      expect((error as UtcpError).code).toBe('HTTP_STATUS');
      const text = describeError(error);
      expect(text).toContain('[REDACTED]'); // the server did echo it: the error held it before redaction
      expectNoSecret(text);
    }
    await client.close();
    expect(logs.length).toBeGreaterThan(0);
    for (const line of logs) expectNoSecret(line);
  });

  it('a secret printed by a CLI tool is redacted from CliExitError', async () => {
    const dir = await tempDir();
    const client = await UtcpClient.create({ variables: { c_TOKEN: TOKEN } }, { rootDir: dir, logger });
    const tools = [
      {
        name: 'leak',
        description: '',
        inputs: { type: 'object', properties: {} },
        tool_call_template: { call_template_type: 'cli', commands: [{ command: 'echo "using ${TOKEN}"; exit 3' }] },
      },
    ];
    await client.registerManual({
      name: 'c',
      call_template_type: 'text',
      content: JSON.stringify({ tools }),
      allowed_communication_protocols: ['cli'],
    });
    const error = await client.callTool('c.leak', {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as UtcpError).code).toBe('PROCESS_EXIT');
    expect(describeError(error)).toContain('using [REDACTED]');
    expectNoSecret(describeError(error));
    await client.close();
  });
});

describe('secrets in CLI commands travel through the environment', () => {
  it('the script text and the process list never hold the value; the command still gets it exactly', async () => {
    const dir = await tempDir();
    const client = await UtcpClient.create({ variables: { c_TOKEN: TOKEN } }, { rootDir: dir });
    const command = [
      'printf "%s" "$BASH_EXECUTION_STRING" > script.txt',
      'tr "\\0" " " < /proc/$$/cmdline > cmdline.txt',
      'printf "%s" "${TOKEN}"',
    ].join('\n');
    const tools = [
      {
        name: 't',
        description: '',
        inputs: { type: 'object', properties: {} },
        tool_call_template: { call_template_type: 'cli', commands: [{ command }] },
      },
    ];
    await client.registerManual({
      name: 'c',
      call_template_type: 'text',
      content: JSON.stringify({ tools }),
      allowed_communication_protocols: ['cli'],
    });
    expect(await client.callTool('c.t', {})).toBe(TOKEN);
    for (const file of ['script.txt', 'cmdline.txt']) {
      const text = await readFile(join(dir, file), 'utf8');
      expect(text.length).toBeGreaterThan(10);
      expect(text).not.toContain(TOKEN);
    }
    await client.close();
  });
});

describe('one-pass substitution', () => {
  it('a secret holding $NAME, ${NAME} and $(...) is used literally and never re-expanded', async () => {
    const dir = await tempDir();
    const client = await UtcpClient.create(
      { variables: { c_PW: HOSTILE } },
      { rootDir: dir, env: { HOME_x: 'EXPANDED', NOPE: 'EXPANDED' } },
    );
    const tools = [
      {
        name: 't',
        description: '',
        inputs: { type: 'object', properties: {} },
        tool_call_template: { call_template_type: 'cli', commands: [{ command: 'printf "%s" "${PW}"' }] },
      },
    ];
    await client.registerManual({
      name: 'c',
      call_template_type: 'text',
      content: JSON.stringify({ tools }),
      allowed_communication_protocols: ['cli'],
    });
    expect(await client.callTool('c.t', {})).toBe(HOSTILE);
    await client.close();
  });

  it('no error shows a part of a secret that looks like a reference', async () => {
    const dir = await tempDir();
    const client = await UtcpClient.create({ variables: { m_TOKEN: 'abc$SECRETPART_9f8e7d' } }, { rootDir: dir });
    const tools = [
      {
        name: 'send',
        description: '',
        inputs: { type: 'object', properties: {} },
        tool_call_template: {
          call_template_type: 'http',
          http_method: 'GET',
          url: `http://127.0.0.1:${port}/x`,
          headers: { Authorization: 'Bearer ${TOKEN}' },
        },
      },
    ];
    await client.registerManual({
      name: 'm',
      call_template_type: 'text',
      content: JSON.stringify({ tools }),
      allowed_communication_protocols: ['http'],
    });
    const error = await client.callTool('m.send', {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as UtcpError).code).toBe('HTTP_STATUS'); // reached the server: no variable lookup failed on the secret's content
    expect(describeError(error)).not.toContain('SECRETPART');
    await client.close();
  });

  it('a config value that is exactly ${NAME} still remaps to the environment', async () => {
    const dir = await tempDir();
    const client = await UtcpClient.create(
      { variables: { c_PW: '${REAL_PW}' } },
      { rootDir: dir, env: { REAL_PW: 'from-env-value' } },
    );
    const tools = [
      {
        name: 't',
        description: '',
        inputs: { type: 'object', properties: {} },
        tool_call_template: { call_template_type: 'cli', commands: [{ command: 'printf "%s" "${PW}"' }] },
      },
    ];
    await client.registerManual({
      name: 'c',
      call_template_type: 'text',
      content: JSON.stringify({ tools }),
      allowed_communication_protocols: ['cli'],
    });
    expect(await client.callTool('c.t', {})).toBe('from-env-value');
    await client.close();
  });
});
