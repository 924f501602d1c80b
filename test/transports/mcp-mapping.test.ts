import { describe, expect, it } from 'vitest';
import { ToolExecutionError, UrlPolicyError } from '../../src/core/errors.js';
import { buildChildEnv as buildSharedChildEnv } from '../../src/process/child-env.js';
const buildChildEnv = (envVars: Record<string, string>, hostEnv: NodeJS.ProcessEnv, platform: NodeJS.Platform) =>
  buildSharedChildEnv({ hostEnv, envVars, platform, what: 'mcp' });
import { mapContentItem, mapToolResult } from '../../src/transports/mcp/map-tool-result.js';
import { resolveServerConfig } from '../../src/transports/mcp/resolve-server-config.js';
import { isPlainResultResponse } from '../../src/transports/mcp/stdio-process-transport.js';

describe('mcp result mapping (docs/design/transports.md#mcp-results)', () => {
  it('throws ToolExecutionError with the joined text when isError is true', () => {
    const result = {
      isError: true,
      content: [
        { type: 'text', text: 'bad input' },
        { type: 'text', text: 'see docs' },
      ],
    };
    let caught: unknown;
    try {
      mapToolResult(result, 's.t');
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ToolExecutionError);
    expect(caught).toMatchObject({ code: 'TOOL_ERROR', details: { text: 'bad input\nsee docs' } });
    expect((caught as Error).message).toContain('bad input\nsee docs');
  });

  it('prefers isError over structuredContent', () => {
    expect(() => mapToolResult({ isError: true, content: [], structuredContent: { ok: true } }, 's.t')).toThrow(
      ToolExecutionError,
    );
  });

  it('unwraps structuredContent whose only key is result', () => {
    expect(mapToolResult({ content: [], structuredContent: { result: [1, 2] } }, 's.t')).toEqual([1, 2]);
    expect(mapToolResult({ content: [], structuredContent: { result: null } }, 's.t')).toBeNull();
  });

  it('keeps structuredContent objects that have result among other keys', () => {
    expect(mapToolResult({ content: [], structuredContent: { result: 1, unit: 'kg' } }, 's.t')).toEqual({
      result: 1,
      unit: 'kg',
    });
  });

  it('ignores a null structuredContent and maps content instead', () => {
    expect(mapToolResult({ content: [{ type: 'text', text: 'hi' }], structuredContent: null }, 's.t')).toBe('hi');
  });

  it('returns [] for empty content and an array for several items', () => {
    expect(mapToolResult({ content: [] }, 's.t')).toEqual([]);
    expect(
      mapToolResult(
        {
          content: [
            { type: 'text', text: '1' },
            { type: 'text', text: 'x' },
          ],
        },
        's.t',
      ),
    ).toEqual([1, 'x']);
  });

  it('parses text holding a JSON object or array, trimmed', () => {
    expect(mapContentItem({ type: 'text', text: '  {"a": [1, 2]}\n' })).toEqual({ a: [1, 2] });
    expect(mapContentItem({ type: 'text', text: '[true]' })).toEqual([true]);
  });

  it('parses JSON-number text as a number and leaves other text alone', () => {
    expect(mapContentItem({ type: 'text', text: ' -12.5e2 ' })).toBe(-1250);
    expect(mapContentItem({ type: 'text', text: '007' })).toBe('007');
    expect(mapContentItem({ type: 'text', text: 'true' })).toBe('true');
    expect(mapContentItem({ type: 'text', text: '"quoted"' })).toBe('"quoted"');
    expect(mapContentItem({ type: 'text', text: '{not json}' })).toBe('{not json}');
  });

  it('returns non-text items unchanged', () => {
    const image = { type: 'image', data: 'AAAA', mimeType: 'image/png' };
    const link = { type: 'resource_link', uri: 'file:///x', name: 'x' };
    expect(mapContentItem(image)).toBe(image);
    expect(mapContentItem(link)).toBe(link);
  });
});

describe('mcp server config', () => {
  it('infers stdio from command and resolves cwd against the root dir', () => {
    const s = resolveServerConfig('fs', { command: 'node', args: ['x.js', 3], cwd: 'sub' }, '/root/dir');
    expect(s).toMatchObject({
      kind: 'stdio',
      command: 'node',
      args: ['x.js', '3'],
      cwd: '/root/dir/sub',
      timeoutMs: 30_000,
    });
  });

  it('infers HTTP with SSE fallback from url and honours transport aliases', () => {
    expect(resolveServerConfig('a', { url: 'https://mcp.example.com/mcp' }, '/r').kind).toBe('http-auto');
    expect(resolveServerConfig('a', { url: 'https://mcp.example.com/mcp', transport: 'http' }, '/r').kind).toBe(
      'streamable-http',
    );
    expect(resolveServerConfig('a', { url: 'https://mcp.example.com/sse', transport: 'sse' }, '/r').kind).toBe('sse');
  });

  it('reads timeout in seconds', () => {
    expect(resolveServerConfig('a', { command: 'x', timeout: 2.5 }, '/r').timeoutMs).toBe(2500);
    expect(() => resolveServerConfig('a', { command: 'x', timeout: 0 }, '/r')).toThrow(/timeout/);
  });

  it('rejects server names containing a dot', () => {
    expect(() => resolveServerConfig('my.server', { command: 'x' }, '/r')).toThrow(/must not contain '\.'/);
  });

  it('applies the URL policy with the MCP server URL context', () => {
    let caught: unknown;
    try {
      resolveServerConfig('a', { url: 'http://10.0.0.5/mcp' }, '/r');
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(UrlPolicyError);
    expect((caught as Error).message).toContain('MCP server URL');
    expect(resolveServerConfig('a', { url: 'http://127.0.0.1:9/mcp' }, '/r').kind).toBe('http-auto');
  });

  it('rejects header values with CR/LF', () => {
    expect(() =>
      resolveServerConfig('a', { url: 'https://x.example/mcp', headers: { 'X-A': 'v\r\nX-B: w' } }, '/r'),
    ).toThrow(/CR\/LF/);
  });

  it('rejects a config with neither command nor url', () => {
    expect(() => resolveServerConfig('a', { args: [] }, '/r')).toThrow(/command.*url/);
  });
});

describe('mcp child environment', () => {
  it('passes only allowlisted host variables plus the server env', () => {
    const env = buildChildEnv(
      { API_TOKEN: 'given', PATH: '/custom' },
      { PATH: '/usr/bin', HOME: '/h', AWS_SECRET_ACCESS_KEY: 's', LANG: 'C' },
      'linux',
    );
    expect(env).toEqual({ PATH: '/custom', HOME: '/h', LANG: 'C', API_TOKEN: 'given' });
  });

  it('uses the Windows allowlist on win32', () => {
    const env = buildChildEnv({}, { SYSTEMROOT: 'C:\\Windows', HOME: '/h', PATHEXT: '.EXE' }, 'win32');
    expect(env).toEqual({ SYSTEMROOT: 'C:\\Windows', PATHEXT: '.EXE' });
  });
});

describe('mcp stdio message fast path (docs/design/transports.md#mcp-call-path)', () => {
  const lines = [
    '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}',
    '{"result":{"content":[],"structuredContent":{"a":1},"isError":false},"jsonrpc":"2.0","id":"abc"}',
    '{"jsonrpc":"2.0","id":2,"result":{}}',
    '{"jsonrpc":"2.0","id":2,"result":{"_meta":{"progressToken":1},"content":[]}}',
    '{"jsonrpc":"2.0","id":2,"result":{"content":[]},"extra":1}',
    '{"jsonrpc":"2.0","id":2.5,"result":{}}',
    '{"jsonrpc":"2.0","id":9007199254740993,"result":{}}',
    '{"jsonrpc":"2.0","id":null,"result":{}}',
    '{"jsonrpc":"2.0","result":{}}',
    '{"jsonrpc":"1.0","id":1,"result":{}}',
    '{"jsonrpc":"2.0","id":1,"result":[1]}',
    '{"jsonrpc":"2.0","id":1,"result":null}',
    '{"jsonrpc":"2.0","id":1,"result":{},"__proto__":{"x":1}}',
    '{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}',
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0}}',
    '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    '[{"jsonrpc":"2.0","id":1,"result":{}}]',
    '"text"',
  ];

  it('takes only results the SDK schema passes through unchanged, and leaves the rest to the schema', async () => {
    const sdk = await import('@modelcontextprotocol/client');
    let fast = 0;
    for (const line of lines) {
      const value: unknown = JSON.parse(line);
      if (isPlainResultResponse(value)) {
        fast++;
        // Whatever the fast path takes, the SDK's own parser accepts as the same message.
        expect(sdk.deserializeMessage(line), line).toEqual(value);
      }
    }
    expect(fast).toBe(3);
  });
});
