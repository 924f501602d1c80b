/**
 * The HTTP stack loads only the parts of undici it uses (docs/design/http-exchange.md#undici-parts): by path for the
 * undici we install, the same classes the package exports, and in a fresh process an HTTP tool call never loads the
 * package entry (which would load fetch, WebSocket, caches and mocks too).
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { undici } from '../../src/http/undici.js';

const require = createRequire(import.meta.url);

describe('undici parts', () => {
  it('are loaded by path for the installed undici, and are the classes the package exports', () => {
    expect(undici.byPath).toBe(true);
    const whole = require('undici') as typeof import('undici');
    expect(undici.Agent).toBe(whole.Agent);
    expect(undici.Client).toBe(whole.Client);
    expect(undici.Pool).toBe(whole.Pool);
    expect(undici.Dispatcher).toBe(whole.Dispatcher);
    expect(undici.EnvHttpProxyAgent).toBe(whole.EnvHttpProxyAgent);
    expect(undici.buildConnector).toBe(whole.buildConnector);
  });

  it('serve an HTTP tool call in a fresh process without loading the package entry', () => {
    const dist = new URL('../../dist/index.js', import.meta.url).href;
    const script = `
      import { createServer } from 'node:http';
      import { createRequire } from 'node:module';
      const { UtcpClient } = await import(${JSON.stringify(dist)});
      const server = createServer((req, res) => { res.setHeader('content-type', 'application/json'); res.end('{"ok":true}'); });
      await new Promise((r) => server.listen(0, '127.0.0.1', r));
      const url = 'http://127.0.0.1:' + server.address().port + '/x';
      const client = await UtcpClient.create();
      const content = JSON.stringify({ tools: [{ name: 't', inputs: { type: 'object' },
        tool_call_template: { call_template_type: 'http', url, http_method: 'GET' } }] });
      const r = await client.registerManual({ name: 'm', call_template_type: 'text', content, allowed_communication_protocols: ['http'] });
      if (!r.success) throw new Error(r.errors.join());
      const result = await client.callTool('m.t', {});
      await client.close();
      server.close();
      const require = createRequire(import.meta.url);
      const entry = require.resolve('undici');
      process.stdout.write(JSON.stringify({ result, entryLoaded: entry in require.cache }));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(JSON.parse(out)).toEqual({ result: { ok: true }, entryLoaded: false });
  });
});
