import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeWorkspace } from './helpers.js';

const PAGE = `<!doctype html><html><head><title>T</title><style>body { color: red }</style><script>alert('x')</script></head>
<body><nav><a href="/">Home</a></nav><h1>Release notes</h1><p>Version <b>2.0</b> adds <a href="https://example.com/docs">the docs</a>.</p>
<ul><li>first</li><li>second</li></ul><img src="x.png" alt="logo"></body></html>`;

describe('code.web_fetch', () => {
  let server: Server;
  let base: string;
  const seen: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.url === '/page') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      else if (req.url === '/data')
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":1,"b":[true]}');
      else if (req.url === '/big') res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(5000));
      else if (req.url === '/long') res.writeHead(200, { 'content-type': 'text/plain' }).end('abcdefghij'.repeat(10));
      else if (req.url === '/away') res.writeHead(302, { location: 'http://10.0.0.1/' }).end();
      else res.writeHead(404).end('nope');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('GETs a page and returns readable text', async () => {
    const { call } = await codeWorkspace();
    const text = await call('web_fetch', { url: `${base}/page` });
    expect(text).toContain('RELEASE NOTES');
    expect(text).toContain('Version 2.0 adds the docs [https://example.com/docs].');
    expect(text).toMatch(/\* first\n \* second/);
    expect(text).not.toMatch(/alert|color: red|logo|Home/);
    expect(seen).toContain('GET /page');
  });

  it('pretty-prints JSON and pages long text with an offset', async () => {
    const { call } = await codeWorkspace({}, { limits: { fetchTextChars: 40 } });
    expect(await call('web_fetch', { url: `${base}/data` })).toBe('{\n  "a": 1,\n  "b": [\n    true\n  ]\n}');
    expect(await call('web_fetch', { url: `${base}/long`, offset: 90 })).toBe('abcdefghij');
    expect(await call('web_fetch', { url: `${base}/long` })).toBe(
      `${'abcdefghij'.repeat(4)}\n(showing characters 0-40 of 100; read on with offset=40)`,
    );
  });

  it('applies the library URL policy, status errors and the size cap', async () => {
    const { client } = await codeWorkspace({}, { limits: { fetchBytes: 1000 } });
    await expect(client.callTool('code.web_fetch', { url: 'http://example.com/' })).rejects.toMatchObject({
      code: 'URL_POLICY',
    });
    await expect(client.callTool('code.web_fetch', { url: `http://user:pw@127.0.0.1:1/` })).rejects.toMatchObject({
      code: 'URL_POLICY',
    });
    await expect(client.callTool('code.web_fetch', { url: `${base}/away` })).rejects.toMatchObject({
      code: 'URL_POLICY',
    });
    await expect(client.callTool('code.web_fetch', { url: `${base}/missing` })).rejects.toMatchObject({
      code: 'HTTP_STATUS',
    });
    await expect(client.callTool('code.web_fetch', { url: `${base}/big` })).rejects.toMatchObject({
      code: 'RESPONSE_TOO_LARGE',
    });
    expect((await client.getTools()).map((t) => t.name).filter((n) => !n.startsWith('code.'))).toEqual([]);
  });
});
