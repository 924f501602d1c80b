/**
 * A failing HTTP call keeps the API's own explanation (docs/design/http-exchange.md#problem-details): an RFC 9457
 * problem document over 2 KiB with ASP.NET-style field errors reaches the error message, `error.problem`, the CLI's
 * `--json` error and an MCP host's tool error, and a secret the server echoes in it is redacted everywhere.
 * Through the built package and CLI, against a real HTTP server on 127.0.0.1.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type * as Mcp from '../../src/mcp/index.js';
import { UtcpClient } from './packed.js';

const mcp = (await import(new URL('../../dist/mcp/index.js', import.meta.url).href)) as typeof Mcp;
const BIN = resolve(__dirname, '../../dist/cli/main.js');
const SECRET = 'tok-problem-9c41e7a2d5';
const FIELD_ERROR = 'The ServiceResource field is required.';

let server: ReturnType<typeof createServer>;
let port = 0;
let dir = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    // Over 2 KiB: the old code cut the body at 2 KiB and then could not parse it.
    const problem = {
      type: 'https://tools.ietf.org/html/rfc9110#section-15.5.1',
      title: 'One or more validation errors occurred.',
      status: 400,
      detail: `The request was sent with ${req.headers['x-token']}. ${'Context. '.repeat(300)}`,
      errors: { ServiceResource: [FIELD_ERROR], 'Schedule.Start': ['Start must be before End.'] },
      traceId: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00',
    };
    res.writeHead(400, { 'content-type': 'application/problem+json' }).end(JSON.stringify(problem));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  dir = mkdtempSync(join(tmpdir(), 'utcp-problem-'));
  writeFileSync(join(dir, 'booking.json'), JSON.stringify(manual()));
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

function manual() {
  return {
    utcp_version: '1.0.1',
    manual_version: '1.0.0',
    tools: [
      {
        name: 'book',
        description: 'Books a service',
        inputs: { type: 'object', properties: {} },
        tool_call_template: {
          call_template_type: 'http',
          url: `http://127.0.0.1:${port}/bookings`,
          http_method: 'POST',
          headers: { 'x-token': '${TOKEN}' },
        },
      },
    ],
  };
}

async function client() {
  const c = await UtcpClient.create({ variables: { booking_TOKEN: SECRET } });
  onTestFinished(() => c.close());
  const r = await c.registerManual({
    name: 'booking',
    call_template_type: 'text',
    content: JSON.stringify(manual()),
    allowed_communication_protocols: ['http'],
  });
  expect(r.success, r.errors.join('; ')).toBe(true);
  return c;
}

describe('problem details reach every surface', () => {
  it('the library error: message with the field errors, problem with the whole document, the secret redacted', async () => {
    const c = await client();
    const error = (await c.callTool('booking.book', {}).catch((e: unknown) => e)) as Error & {
      problem?: Record<string, unknown>;
    };
    expect(error.message).toContain('The request was sent with [REDACTED]');
    expect(error.message).toContain(`ServiceResource: ${FIELD_ERROR}`);
    expect(error.message).toContain('Schedule.Start: Start must be before End.');
    expect(error.problem?.errors).toEqual({
      ServiceResource: [FIELD_ERROR],
      'Schedule.Start': ['Start must be before End.'],
    });
    expect(JSON.stringify(error.problem)).not.toContain(SECRET);
    expect(JSON.stringify(error.problem)).toContain('[REDACTED]');
  });

  it('the CLI: the message line and the --json error carry the field errors', async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
        execFile(
          process.execPath,
          [BIN, ...args],
          {
            cwd: dir,
            env: { PATH: process.env.PATH!, HOME: dir, NO_COLOR: '1', booking_TOKEN: SECRET },
            timeout: 30_000,
          },
          (error, stdout, stderr) =>
            done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
        ),
      );
    const human = await run(['call', 'booking.book', 'booking.json']);
    expect(human.stderr).toContain(`ServiceResource: ${FIELD_ERROR}`);
    const json = await run(['call', 'booking.book', 'booking.json', '--json']);
    const { error } = JSON.parse(json.stdout);
    expect(error.problem.errors.ServiceResource).toEqual([FIELD_ERROR]);
    expect(json.stdout + json.stderr + human.stderr).not.toContain(SECRET);
  });

  it('an MCP host: the tool error holds the field errors and the problem document', async () => {
    const c = await client();
    const handle = await mcp.serveMcp(c, { transport: 'http' });
    onTestFinished(() => handle.close());
    const host = new Client({ name: 'problem-test', version: '1.0.0' });
    await host.connect(
      new StreamableHTTPClientTransport(new URL(handle.url!), {
        requestInit: { headers: { authorization: `Bearer ${handle.token}` } },
      }),
    );
    onTestFinished(() => host.close());
    const [tool] = (await host.listTools()).tools;
    const result = await host.callTool({ name: tool.name, arguments: {} });
    expect(result.isError).toBe(true);
    const text = (result.content as Array<{ text: string }>).map((p) => p.text).join('\n');
    expect(text).toContain(`ServiceResource: ${FIELD_ERROR}`);
    expect(text).toContain('"traceId"');
    expect(text).not.toContain(SECRET);
  });
});
