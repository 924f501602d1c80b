/**
 * A REMOTE manual source for the dial-guard tests: `tools` served as a UTCP manual over TCP on 127.0.0.1 and
 * registered under a host name, so the client treats the manual as remote and its tools' dials go through the guard.
 */
import { createServer as createTcpServer, type LookupFunction } from 'node:net';
import { expect, onTestFinished } from 'vitest';
import { listen } from '../helpers/listeners.js';
import { UtcpClient } from './packed.js';

export async function registerRemoteManual(
  tools: unknown[],
  lookup: LookupFunction,
  protocols: readonly string[],
  /** `host: '127.0.0.1'` registers the same server as a LOCAL source, for the contrast. */
  options: { host?: string } = {},
): Promise<{ client: UtcpClient; result: Awaited<ReturnType<UtcpClient['registerManual']>> }> {
  const manual = { utcp_version: '1.0.0', manual_version: '1.0.0', tools };
  const server = createTcpServer((socket) => {
    socket.on('error', () => {});
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString();
      if (buffered.includes('\n')) socket.end(`${JSON.stringify(manual)}\n`);
    });
  });
  const port = await listen(server);
  const client = await UtcpClient.create({}, { lookup });
  onTestFinished(() => client.close());
  const result = await client.registerManual({
    name: 'm',
    call_template_type: 'tcp',
    host: options.host ?? 'manuals.example.test',
    port,
    framing_strategy: 'delimiter',
    message_delimiter: '\\n',
    timeout: 5000,
    allowed_communication_protocols: [...protocols],
  });
  expect(result.errors).toEqual([]);
  return { client, result };
}
