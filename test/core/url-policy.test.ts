import { describe, expect, it } from 'vitest';
import {
  assertHeaderSafe,
  assertUrlAllowed,
  isLoopbackLike,
  isSensitiveHeader,
  sameOrigin,
} from '../../src/core/url-policy.js';

describe('URL policy (docs/design/security.md#attack-cases)', () => {
  it.each([
    'https://example.com/x',
    'HTTPS://example.com',
    'https://example.com:8443',
    'http://localhost',
    'http://localhost:8080',
    'http://127.0.0.1:9090',
    'http://127.0.0.2',
    'http://[::1]:9090',
  ])('accepts %s', (url) => expect(() => assertUrlAllowed(url, 'manual discovery')).not.toThrow());

  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://internal.service.local',
    'http://10.0.0.5',
    'http://example.com',
    'http://localhost.evil.com',
    'http://127.0.0.1.attacker.example',
    'file:///etc/passwd',
    'ftp://example.com',
    'javascript:alert(1)',
    '',
    'not-a-url',
    'http://0.0.0.0',
    'https://u:p@example.com',
  ])('rejects %s with the context and the policy phrase', (url) => {
    expect(() => assertUrlAllowed(url, 'manual discovery')).toThrow(
      /manual discovery.*HTTPS or be a literal loopback address/,
    );
  });

  it('never shows userinfo or the query string in the message', () => {
    expect(() => assertUrlAllowed('http://user:pw@10.0.0.5/x?key=secret', 'tool invocation')).toThrow(
      /^(?!.*(secret|pw)).*$/,
    );
  });

  it.each([
    'localhost',
    '127.0.0.1',
    'http://127.0.0.1:80',
    '[::1]',
    'https://localhost',
    '0.0.0.0',
    '[::]',
    '127.0.0.2',
    '127.255.255.254',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    'https://0.0.0.0',
    'https://[::ffff:127.0.0.5]',
    'api.localhost',
    'https://localhost./x',
    'https://127.0.0.1./x',
    'api.localhost.',
  ])('%s is loopback-like', (h) => expect(isLoopbackLike(h)).toBe(true));

  it.each([
    'example.com',
    '10.0.0.1',
    '192.168.1.1',
    '203.0.113.5',
    '[2001:db8::1]',
    '[::ffff:8.8.8.8]',
    'http://localhost.evil.com',
    'http://127.0.0.1.attacker.example',
    '',
    'not-a-url',
  ])('%s is not loopback-like', (h) => expect(isLoopbackLike(h)).toBe(false));
});

describe('origins and headers', () => {
  it('normalises default ports and treats malformed ports as cross-origin', () => {
    expect(sameOrigin('http://x/', 'http://x:80/')).toBe(true);
    expect(sameOrigin('https://api.example.com/', 'https://api.example.com:443/')).toBe(true);
    expect(sameOrigin('https://a.com/', 'http://a.com/')).toBe(false);
    expect(sameOrigin('https://a.com/', 'https://a.com:8443/')).toBe(false);
    for (const port of ['99999', '65536', 'abc', '-1'])
      expect(sameOrigin('https://a.com/', `https://a.com:${port}/`)).toBe(false);
  });

  it.each([
    'Authorization',
    'Proxy-Authorization',
    'Cookie',
    'WWW-Authenticate',
    'X-Api-Key',
    'X-Auth-Token',
    'X-Access-Token',
    'X-Csrf-Token',
    'X-Amz-Security-Token',
    'X-Goog-Api-Key',
    'X_API_KEY',
    'X_AUTH_TOKEN',
    'API_KEY',
    'XApiKey',
    'ApiKey',
    'AuthToken',
    'AccessToken',
    'BearerToken',
    'SessionId',
    'X-MyApp-Token',
    'X_MyApp_Token',
    'Custom-Bearer',
    'Custom_Secret',
    'X-JWT',
    'X-CSRF',
    'X-MyApp-Auth',
  ])('%s is sensitive', (h) => expect(isSensitiveHeader(h)).toBe(true));

  it.each([
    'Content-Type',
    'User-Agent',
    'Accept',
    'X-Trace-Id',
    'X-Request-Id',
    'X-Forwarded-For',
    'Cache-Control',
    'Date',
  ])('%s is not sensitive', (h) => expect(isSensitiveHeader(h)).toBe(false));

  it('rejects CR/LF in header names and values without echoing the value', () => {
    expect(() => assertHeaderSafe('X-Foo', 'a\r\nX-Injected: secret')).toThrow(/CR\/LF/);
    expect(() => assertHeaderSafe('X-Foo', 'a\r\nX-Injected: secret')).not.toThrow(/secret/);
    expect(() => assertHeaderSafe('X-Foo\nX-Other: bar', 'v')).toThrow(/CR\/LF/);
  });
});
