import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Auth, OAuth2Auth } from '../../src/core/types.js';
import type { HttpCallTemplate } from '../../src/index.js';
import { createHttpTransport } from '../../src/transports/http/index.js';
import { invalidateAuth, resolveAuth } from '../../src/http/auth.js';
import { httpDispatcher } from '../../src/http/http-dispatcher.js';
import { OAuth2TokenCache } from '../../src/http/oauth2.js';
import { callOptions, makeTool, testContext, type TestContext } from '../fixtures/http/harness.js';
import { deferred, json, startServer, type Handler, type TestServer } from '../fixtures/http/server.js';

const never = new AbortController().signal;

async function server(handler: Handler): Promise<TestServer> {
  const s = await startServer(handler);
  onTestFinished(() => s.close());
  return s;
}

interface TokenRequest {
  form: Record<string, string>;
  authorization: string | undefined;
}

/** A token endpoint that issues tok-1, tok-2, ... and records each request. */
async function tokenServer(respond?: (req: TokenRequest, n: number, res: ServerResponse) => boolean | void) {
  const seen: TokenRequest[] = [];
  const s = await server((req: IncomingMessage, res: ServerResponse, body: string) => {
    const request = { form: Object.fromEntries(new URLSearchParams(body)), authorization: req.headers.authorization };
    seen.push(request);
    if (respond?.(request, seen.length, res)) return;
    json(res, { access_token: `tok-${seen.length}`, token_type: 'bearer' });
  });
  return { ...s, seen, tokenUrl: `${s.url}/token` };
}

const oauth = (tokenUrl: string, more: Partial<OAuth2Auth> = {}): OAuth2Auth => ({
  auth_type: 'oauth2',
  token_url: tokenUrl,
  client_id: 'client-1',
  client_secret: 'S3CRET',
  ...more,
});

describe('resolveAuth: api_key, basic, oauth2_user', () => {
  it('puts an api_key in a header named X-Api-Key by default', async () => {
    await expect(resolveAuth({ auth_type: 'api_key', api_key: 'k' }, testContext(), never)).resolves.toEqual({
      headers: { 'X-Api-Key': 'k' },
      query: [],
      cookies: [],
      authHeaderNames: ['X-Api-Key'],
    });
  });

  it('puts an api_key in the query or a cookie by location', async () => {
    const ctx = testContext();
    await expect(
      resolveAuth({ auth_type: 'api_key', api_key: 'k', var_name: 'key', location: 'query' }, ctx, never),
    ).resolves.toMatchObject({
      headers: {},
      query: [['key', 'k']],
    });
    await expect(
      resolveAuth({ auth_type: 'api_key', api_key: 'k', var_name: 'sid', location: 'cookie' }, ctx, never),
    ).resolves.toMatchObject({
      headers: {},
      cookies: [['sid', 'k']],
    });
  });

  it('rejects an empty api_key', async () => {
    await expect(resolveAuth({ auth_type: 'api_key', api_key: '' }, testContext(), never)).rejects.toMatchObject({
      code: 'INVALID_MANUAL',
    });
  });

  it.each(['X-Api-Key\r\nX-Injected: yes', 'X-Foo\nX-Other: bar', 'X-Foo\rX-Other: bar'])(
    'rejects CR/LF in var_name %j',
    async (name) => {
      for (const location of ['header', 'query', 'cookie'] as const) {
        const error = await resolveAuth(
          { auth_type: 'api_key', api_key: 'value-123', var_name: name, location },
          testContext(),
          never,
        ).catch((e: Error) => e);
        expect(error).toMatchObject({ code: 'HEADER_INJECTION', message: expect.stringContaining('CR/LF') });
        expect((error as Error).message).not.toContain('value-123');
        expect((error as Error).message).not.toContain('Injected');
      }
    },
  );

  it('rejects CR/LF in an api_key value and in an oauth2_user token', async () => {
    await expect(
      resolveAuth({ auth_type: 'api_key', api_key: 'a\r\nX-Evil: 1' }, testContext(), never),
    ).rejects.toMatchObject({ code: 'HEADER_INJECTION' });
    await expect(
      resolveAuth({ auth_type: 'oauth2_user', access_token: 't\nX-Evil: 1' }, testContext(), never),
    ).rejects.toMatchObject({ code: 'HEADER_INJECTION' });
  });

  it('rejects a cookie value that would add another cookie', async () => {
    await expect(
      resolveAuth({ auth_type: 'api_key', api_key: 'a; admin=1', location: 'cookie' }, testContext(), never),
    ).rejects.toMatchObject({
      code: 'HEADER_INJECTION',
    });
  });

  it('encodes basic credentials as UTF-8 base64', async () => {
    const m = await resolveAuth({ auth_type: 'basic', username: 'üser', password: 'p:w' }, testContext(), never);
    expect(m.headers).toEqual({ Authorization: 'Basic ' + Buffer.from('üser:p:w', 'utf8').toString('base64') });
  });

  it('uses Authorization: Bearer <token> for oauth2_user by default', async () => {
    const m = await resolveAuth({ auth_type: 'oauth2_user', access_token: 'abc' }, testContext(), never);
    expect(m.headers).toEqual({ Authorization: 'Bearer abc' });
    expect(m.authHeaderNames).toEqual(['Authorization']);
  });

  it('returns nothing for null auth and rejects unknown auth types', async () => {
    await expect(resolveAuth(null, testContext(), never)).resolves.toEqual({
      headers: {},
      query: [],
      cookies: [],
      authHeaderNames: [],
    });
    await expect(resolveAuth({ auth_type: 'magic' } as unknown as Auth, testContext(), never)).rejects.toMatchObject({
      code: 'NOT_SUPPORTED',
    });
  });
});

describe('OAuth2 client credentials', () => {
  it('sends the credentials in a form body, once, without an Authorization header', async () => {
    const t = await tokenServer();
    const m = await resolveAuth(oauth(t.tokenUrl, { scope: 'read write' }), testContext(), never);
    expect(m.headers).toEqual({ Authorization: 'Bearer tok-1' });
    expect(t.seen).toEqual([
      {
        form: { grant_type: 'client_credentials', client_id: 'client-1', client_secret: 'S3CRET', scope: 'read write' },
        authorization: undefined,
      },
    ]);
    expect(t.requests[0]).toMatchObject({ method: 'POST', url: '/token' });
    expect(t.requests[0].headers).toMatchObject({
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    });
  });

  it('omits scope when it is null', async () => {
    const t = await tokenServer();
    await resolveAuth(oauth(t.tokenUrl), testContext(), never);
    expect(t.seen[0].form).not.toHaveProperty('scope');
  });

  it('reuses a cached token until it nears expiry', async () => {
    const t = await tokenServer();
    const ctx = testContext();
    const auth = oauth(t.tokenUrl);
    await resolveAuth(auth, ctx, never);
    const second = await resolveAuth(auth, ctx, never);
    expect(second.headers.Authorization).toBe('Bearer tok-1');
    expect(t.seen).toHaveLength(1);
  });

  it('refetches a token that expires within 30 s', async () => {
    const t = await tokenServer((_r, n, res) => (json(res, { access_token: `tok-${n}`, expires_in: 25 }), true));
    const ctx = testContext();
    const auth = oauth(t.tokenUrl);
    await resolveAuth(auth, ctx, never);
    const second = await resolveAuth(auth, ctx, never);
    expect(second.headers.Authorization).toBe('Bearer tok-2');
    expect(t.seen).toHaveLength(2);
  });

  it('reuses a token with a long expires_in and refreshes it once the clock passes expiry - 30 s', async () => {
    const t = await tokenServer((_r, n, res) => (json(res, { access_token: `tok-${n}`, expires_in: 120 }), true));
    const ctx = testContext();
    let now = 1_000_000;
    const cache = new OAuth2TokenCache(
      () => httpDispatcher(ctx),
      () => now,
    );
    onTestFinished(() => cache.close());
    const auth = oauth(t.tokenUrl);
    expect(await cache.token(auth, never)).toBe('tok-1');
    now += 89_000;
    expect(await cache.token(auth, never)).toBe('tok-1');
    now += 2_000;
    expect(await cache.token(auth, never)).toBe('tok-2');
    expect(t.seen).toHaveLength(2);
  });

  it('falls back to HTTP Basic after a 401, never sending the secret twice in one request', async () => {
    const t = await tokenServer((r, n, res) => {
      if (!r.authorization) return (json(res, { error: 'invalid_client' }, 401), true);
      json(res, { access_token: `tok-${n}` });
      return true;
    });
    const m = await resolveAuth(oauth(t.tokenUrl, { scope: 's' }), testContext(), never);
    expect(m.headers.Authorization).toBe('Bearer tok-2');
    expect(t.seen).toHaveLength(2);
    expect(t.seen[0]).toEqual({
      form: { grant_type: 'client_credentials', client_id: 'client-1', client_secret: 'S3CRET', scope: 's' },
      authorization: undefined,
    });
    expect(t.seen[1]).toEqual({
      form: { grant_type: 'client_credentials', scope: 's' },
      authorization: 'Basic ' + Buffer.from('client-1:S3CRET').toString('base64'),
    });
  });

  it('falls back to Basic after a 400 too, and goes straight to Basic for the next token', async () => {
    const t = await tokenServer((r, n, res) => {
      if (!r.authorization) return (json(res, { error: 'invalid_request' }, 400), true);
      json(res, { access_token: `tok-${n}`, expires_in: 1 });
      return true;
    });
    const ctx = testContext();
    await resolveAuth(oauth(t.tokenUrl), ctx, never);
    await resolveAuth(oauth(t.tokenUrl), ctx, never);
    expect(t.seen.map((r) => Boolean(r.authorization))).toEqual([false, true, true]);
  });

  it('fails with the status (no secret in the message) when both credential styles are refused', async () => {
    const t = await tokenServer(
      (_r, _n, res) => (json(res, { error: 'invalid_client', error_description: 'bad secret S3CRET' }, 401), true),
    );
    const error = (await resolveAuth(oauth(t.tokenUrl), testContext(), never).catch((e: unknown) => e)) as Error;
    expect(error).toMatchObject({ code: 'HTTP_STATUS', message: expect.stringContaining('HTTP 401 (invalid_client)') });
    expect(error.message).not.toContain('S3CRET');
    expect(t.seen).toHaveLength(2);
  });

  it('does not fall back on other statuses', async () => {
    const t = await tokenServer((_r, _n, res) => (json(res, {}, 500), true));
    await expect(resolveAuth(oauth(t.tokenUrl), testContext(), never)).rejects.toMatchObject({ code: 'HTTP_STATUS' });
    expect(t.seen).toHaveLength(1);
  });

  it('never reuses a token across templates with the same client_id but a different token_url', async () => {
    const a = await tokenServer((_r, n, res) => (json(res, { access_token: `A-${n}` }), true));
    const b = await tokenServer((_r, n, res) => (json(res, { access_token: `B-${n}` }), true));
    const ctx = testContext();
    const first = await resolveAuth(oauth(a.tokenUrl), ctx, never);
    const second = await resolveAuth(oauth(b.tokenUrl), ctx, never);
    expect(first.headers.Authorization).toBe('Bearer A-1');
    expect(second.headers.Authorization).toBe('Bearer B-1');
    expect(a.seen).toHaveLength(1);
    expect(b.seen).toHaveLength(1);
  });

  it('keys the cache by secret and scope as well', async () => {
    const t = await tokenServer();
    const ctx = testContext();
    await resolveAuth(oauth(t.tokenUrl), ctx, never);
    await resolveAuth(oauth(t.tokenUrl, { client_secret: 'OTHER' }), ctx, never);
    await resolveAuth(oauth(t.tokenUrl, { scope: 'admin' }), ctx, never);
    await resolveAuth(oauth(t.tokenUrl, { scope: 'admin' }), ctx, never);
    expect(t.seen).toHaveLength(3);
  });

  it('never shares tokens between two clients', async () => {
    const t = await tokenServer();
    const one = await resolveAuth(oauth(t.tokenUrl), testContext(), never);
    const two = await resolveAuth(oauth(t.tokenUrl), testContext(), never);
    expect([one.headers.Authorization, two.headers.Authorization]).toEqual(['Bearer tok-1', 'Bearer tok-2']);
  });

  it('sends one token request for concurrent callers', async () => {
    const release = deferred();
    const arrived = deferred();
    const t = await tokenServer((_r, n, res) => {
      arrived.resolve();
      void release.promise.then(() => json(res, { access_token: `tok-${n}` }));
      return true;
    });
    const ctx = testContext();
    const pending = Array.from({ length: 5 }, () => resolveAuth(oauth(t.tokenUrl), ctx, never));
    await arrived.promise;
    release.resolve();
    const results = await Promise.all(pending);
    expect(results.map((r) => r.headers.Authorization)).toEqual(Array(5).fill('Bearer tok-1'));
    expect(t.seen).toHaveLength(1);
  });

  it('fails when the token response has no access_token', async () => {
    const t = await tokenServer((_r, _n, res) => (json(res, { token_type: 'bearer' }), true));
    await expect(resolveAuth(oauth(t.tokenUrl), testContext(), never)).rejects.toMatchObject({
      code: 'PROTOCOL_ERROR',
      message: expect.stringContaining('no access_token'),
    });
  });

  it('refuses a token response above 64 KiB', async () => {
    const t = await tokenServer((_r, _n, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: 'x', pad: 'p'.repeat(70_000) }));
      return true;
    });
    await expect(resolveAuth(oauth(t.tokenUrl), testContext(), never)).rejects.toMatchObject({
      code: 'RESPONSE_TOO_LARGE',
    });
  });

  it('does not follow a redirect from the token endpoint', async () => {
    const t = await tokenServer((_r, _n, res) => {
      res.writeHead(307, { location: '/elsewhere' });
      res.end();
      return true;
    });
    await expect(resolveAuth(oauth(t.tokenUrl), testContext(), never)).rejects.toMatchObject({
      message: expect.stringContaining('never follow redirects'),
    });
    expect(t.requests).toHaveLength(1);
  });

  it.each(['http://169.254.169.254/oauth/token', 'http://attacker.example/token', 'ftp://example.com/token'])(
    'rejects the token URL %s before sending anything',
    async (tokenUrl) => {
      await expect(resolveAuth(oauth(tokenUrl), testContext(), never)).rejects.toMatchObject({
        code: 'URL_POLICY',
        message: expect.stringContaining('OAuth2 token URL'),
      });
    },
  );

  it('accepts form-encoded token responses', async () => {
    const t = await tokenServer((_r, _n, res) => {
      res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded' });
      res.end('access_token=formtok&expires_in=3600');
      return true;
    });
    await expect(resolveAuth(oauth(t.tokenUrl), testContext(), never)).resolves.toMatchObject({
      headers: { Authorization: 'Bearer formtok' },
    });
  });

  it('honours the caller signal while waiting for a token', async () => {
    const t = await tokenServer(() => true); // never answers
    const controller = new AbortController();
    const pending = resolveAuth(oauth(t.tokenUrl), testContext(), controller.signal);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'ABORTED' });
  });
});

describe('OAuth2 refresh tokens', () => {
  it('uses a configured refresh_token first, then the rotated one', async () => {
    const t = await tokenServer(
      (_r, n, res) => (json(res, { access_token: `tok-${n}`, expires_in: 1, refresh_token: `rt-${n}` }), true),
    );
    const ctx = testContext();
    const auth = oauth(t.tokenUrl, { refresh_token: 'rt-0', scope: 'x' });
    await resolveAuth(auth, ctx, never);
    await resolveAuth(auth, ctx, never);
    expect(t.seen.map((r) => r.form)).toEqual([
      {
        grant_type: 'refresh_token',
        refresh_token: 'rt-0',
        client_id: 'client-1',
        client_secret: 'S3CRET',
        scope: 'x',
      },
      {
        grant_type: 'refresh_token',
        refresh_token: 'rt-1',
        client_id: 'client-1',
        client_secret: 'S3CRET',
        scope: 'x',
      },
    ]);
  });

  it('refreshes with a refresh_token from a token response, falling back to client credentials when refused', async () => {
    const t = await tokenServer((r, n, res) => {
      if (r.form.grant_type === 'refresh_token') return (json(res, { error: 'invalid_grant' }, 400), true);
      json(res, { access_token: `tok-${n}`, expires_in: 1, refresh_token: 'rt-from-response' });
      return true;
    });
    const ctx = testContext();
    await resolveAuth(oauth(t.tokenUrl), ctx, never);
    const second = await resolveAuth(oauth(t.tokenUrl), ctx, never);
    expect(t.seen.map((r) => r.form.grant_type)).toEqual(['client_credentials', 'refresh_token', 'client_credentials']);
    expect(second.headers.Authorization).toBe('Bearer tok-3');
  });

  it('fails when a configured refresh_token is refused (no silent fallback)', async () => {
    const t = await tokenServer((_r, _n, res) => (json(res, { error: 'invalid_grant' }, 400), true));
    await expect(resolveAuth(oauth(t.tokenUrl, { refresh_token: 'rt-0' }), testContext(), never)).rejects.toMatchObject(
      { code: 'HTTP_STATUS' },
    );
    expect(t.seen).toHaveLength(1);
  });
});

describe('OAuth2 on http calls', () => {
  function httpCall(ctx: TestContext, template: HttpCallTemplate) {
    return createHttpTransport(ctx).callTool(makeTool('t', template), {}, template, callOptions(template));
  }

  it('drops the token after a 401, fetches a new one and retries once', async () => {
    const t = await tokenServer();
    const api = await server((req, res) =>
      req.headers.authorization === 'Bearer tok-1'
        ? json(res, {}, 401)
        : json(res, { auth: req.headers.authorization }),
    );
    const template: HttpCallTemplate = { call_template_type: 'http', url: `${api.url}/x`, auth: oauth(t.tokenUrl) };
    await expect(httpCall(testContext(), template)).resolves.toEqual({ auth: 'Bearer tok-2' });
    expect(api.requests.map((r) => r.headers.authorization)).toEqual(['Bearer tok-1', 'Bearer tok-2']);
  });

  it('retries only once when the API keeps answering 401', async () => {
    const t = await tokenServer();
    const api = await server((_req, res) => json(res, { error: 'no' }, 401));
    const template: HttpCallTemplate = { call_template_type: 'http', url: `${api.url}/x`, auth: oauth(t.tokenUrl) };
    await expect(httpCall(testContext(), template)).rejects.toMatchObject({ status: 401 });
    expect(api.requests).toHaveLength(2);
    expect(t.seen).toHaveLength(2);
  });

  it('does not retry a 401 for other auth kinds', async () => {
    const api = await server((_req, res) => json(res, {}, 401));
    const template: HttpCallTemplate = {
      call_template_type: 'http',
      url: api.url,
      auth: { auth_type: 'api_key', api_key: 'k' },
    };
    await expect(httpCall(testContext(), template)).rejects.toMatchObject({ status: 401 });
    expect(api.requests).toHaveLength(1);
  });

  it('invalidateAuth makes the next resolveAuth fetch a new token', async () => {
    const t = await tokenServer();
    const ctx = testContext();
    const auth = oauth(t.tokenUrl);
    await resolveAuth(auth, ctx, never);
    invalidateAuth(auth, ctx);
    await expect(resolveAuth(auth, ctx, never)).resolves.toMatchObject({ headers: { Authorization: 'Bearer tok-2' } });
  });
});
