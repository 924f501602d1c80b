/**
 * What an http tool call works out once per template (docs/design/http-exchange.md#per-call-cost) still applies on
 * every call: the URL policy of a URL without placeholders, and the request URL, on the first call and on later ones.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import type { JsonObject } from '../../src/core/types.js';
import type { HttpCallTemplate } from '../../src/index.js';
import { createHttpTransport } from '../../src/transports/http/index.js';
import { callOptions, makeTool, testContext, type TestContext } from '../fixtures/http/harness.js';
import { json, startServer, type TestServer } from '../fixtures/http/server.js';

async function server(): Promise<TestServer> {
  const s = await startServer((_req, res) => json(res, { ok: true }));
  onTestFinished(() => s.close());
  return s;
}

function call(ctx: TestContext, template: HttpCallTemplate, args: JsonObject = {}) {
  const transport = createHttpTransport(ctx);
  return transport.callTool(makeTool('t', template), args, template, callOptions(template));
}

describe('http tool calls: per-template work', () => {
  it('refuses a static URL the URL policy refuses on every call of the same template, not only the first', async () => {
    const ctx = testContext();
    const template: HttpCallTemplate = { call_template_type: 'http', url: 'http://example.invalid/weather' };
    for (let i = 0; i < 3; i++) {
      await expect(call(ctx, template, { city: 'paris' })).rejects.toMatchObject({
        code: 'URL_POLICY',
        message: expect.stringContaining('http://example.invalid/weather is not allowed'),
      });
    }
    const withUser: HttpCallTemplate = { call_template_type: 'http', url: 'https://user:pw@example.invalid/w' };
    for (let i = 0; i < 2; i++) {
      await expect(call(ctx, withUser)).rejects.toMatchObject({
        code: 'URL_POLICY',
        message: expect.stringContaining('credentials in the URL'),
      });
    }
  });

  it('sends the same request URL on the first and later calls: existing query, bare "?", fragment', async () => {
    const s = await server();
    const ctx = testContext();
    const cases: Array<[string, JsonObject, string]> = [
      [`${s.url}/w`, { city: 'paris' }, '/w?city=paris'],
      [`${s.url}/w`, {}, '/w'],
      [`${s.url}/w?fixed=1`, { city: 'a b' }, '/w?fixed=1&city=a%20b'],
      [`${s.url}/w?fixed=1`, {}, '/w?fixed=1'],
      [`${s.url}/w?`, { city: 'paris' }, '/w?city=paris'],
      [`${s.url}/w?`, {}, '/w'],
      [`${s.url}/w#part`, { city: 'paris' }, '/w?city=paris'],
      [`${s.url}/w?x=1#part`, { city: 'paris' }, '/w?x=1&city=paris'],
      [`${s.url}/w#`, { city: 'paris' }, '/w?city=paris'],
      [`${s.url}/a b/%7e`, { 'k y': "it's" }, '/a%20b/%7e?k%20y=it%27s'],
      [`  ${s.url}/w  `, { n: [1, 2] }, '/w?n=1&n=2'],
    ];
    for (const [url, args, expected] of cases) {
      const template: HttpCallTemplate = { call_template_type: 'http', url };
      for (let i = 0; i < 2; i++) {
        s.requests.length = 0;
        await call(ctx, template, args);
        expect(
          s.requests.map((r) => r.url),
          `${url} call ${i + 1}`,
        ).toEqual([expected]);
      }
    }
  });

  it('keeps styled query parameters and auth query parameters in order after the static URL query', async () => {
    const s = await server();
    const ctx = testContext();
    const template: HttpCallTemplate = {
      call_template_type: 'http',
      url: `${s.url}/w?fixed=1`,
      parameter_serialization: { ids: { in: 'query', style: 'pipeDelimited', explode: false } },
      auth: { auth_type: 'api_key', api_key: 'k1', var_name: 'key', location: 'query' },
    } as HttpCallTemplate;
    for (let i = 0; i < 2; i++) {
      s.requests.length = 0;
      await call(ctx, template, { ids: ['a', 'b'], q: 'x' });
      expect(s.requests[0].url).toBe('/w?fixed=1&ids=a|b&q=x&key=k1');
    }
  });
});
