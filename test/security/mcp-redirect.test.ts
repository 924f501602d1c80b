/** docs/design/security.md#redirects: MCP HTTP requests never follow redirects, not even same-origin ones. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from './packed.js';

it('refuses an MCP server URL that answers with a redirect, naming the rule, and never requests the target', async () => {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (req.url === '/mcp') {
      res.writeHead(307, { location: '/elsewhere/mcp' });
      res.end();
    } else {
      res.writeHead(500);
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  const client = await UtcpClient.create();
  onTestFinished(() => client.close());
  const r = await client.registerManual({
    name: 'm',
    call_template_type: 'mcp',
    config: { mcpServers: { s: { url, transport: 'http' } } },
  });
  expect(r.success).toBe(false);
  expect(r.errors.join(' ')).toMatch(/never follow redirects/);
  expect(seen.some((s) => s.includes('/elsewhere'))).toBe(false);
});
