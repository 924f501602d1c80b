/** The `utcp` CLI passes a config file's `resilience` block to its client (docs/design/resilience.md#config). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli } from '../helpers/run-cli.js';

const run = (args: string[], cwd: string) => runCli(args, cwd);

describe('utcp call with a config resilience block', () => {
  it('follows the config: retries 0 sends a failing GET once, retries 1 twice', async () => {
    const hits: string[] = [];
    const server = createServer((req, res) => {
      if (req.url === '/utcp') {
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        res.setHeader('content-type', 'application/json');
        return void res.end(
          JSON.stringify({
            tools: [{ name: 'get', tool_call_template: { call_template_type: 'http', url: `${base}/get` } }],
          }),
        );
      }
      hits.push(req.url ?? '');
      res.writeHead(503, { 'retry-after': '0' });
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
    const dir = mkdtempSync(join(tmpdir(), 'utcp-cli-resilience-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/utcp`;
    const config = (retries: number) =>
      writeFileSync(
        join(dir, 'utcp.config.json'),
        JSON.stringify({
          resilience: { retries },
          manual_call_templates: [{ name: 'api', call_template_type: 'http', url }],
        }),
      );

    config(0);
    const once = await run(['call', 'api.get'], dir);
    expect(once.code).not.toBe(0);
    expect(once.stderr).toContain('503');
    expect(hits).toHaveLength(1);

    config(1);
    await run(['call', 'api.get'], dir);
    expect(hits).toHaveLength(3);
  });
});
