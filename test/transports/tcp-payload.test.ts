import { describe, expect, it } from 'vitest';
import { socketDiscoveryResult } from '../../src/transports/shared/socket-discovery.js';
import {
  buildSocketPayload,
  decodeResponseBytes,
  discoveryMessageText,
} from '../../src/transports/shared/socket-payload.js';
import { decodeEscapes } from '../../src/transports/tcp/decode-escapes.js';
import { JsonValueScanner } from '../../src/transports/tcp/json-value-scanner.js';

function scan(...chunks: string[]): number {
  const s = new JsonValueScanner();
  for (const c of chunks) {
    const end = s.push(Buffer.from(c));
    if (end >= 0) return end;
  }
  return s.end();
}

describe('JSON value scanner', () => {
  it('finds the end of nested containers across chunks, ignoring brackets in strings', () => {
    const first = '{"a":"}]\\"{';
    const second = '","b":[1,[2]]}';
    expect(scan(first, second, 'trailing')).toBe(first.length + second.length);
    expect(JSON.parse(first + second)).toEqual({ a: '}]"{', b: [1, [2]] });
  });

  it('handles an escaped backslash before a closing quote', () => {
    expect(scan('["x\\\\"]   ')).toBe(7);
  });

  it('ends top-level strings, literals and numbers', () => {
    expect(scan('  "a\\"b"x')).toBe(8);
    expect(scan('tr', 'ue{}')).toBe(4);
    expect(scan('null')).toBe(4);
    expect(scan('-12.5e3 ')).toBe(7);
    expect(scan('42')).toBe(2); // complete only at end of input
  });

  it('reports incomplete values', () => {
    expect(scan('{"a":[1,2]')).toBe(-1);
    expect(scan('"open')).toBe(-1);
  });

  it('rejects bytes that cannot start or continue a JSON value', () => {
    expect(() => scan('<html>')).toThrow(expect.objectContaining({ code: 'PROTOCOL_ERROR' }));
    expect(() => scan('trux')).toThrow(expect.objectContaining({ code: 'PROTOCOL_ERROR' }));
  });
});

describe('delimiter escape sequences', () => {
  it('decodes \\n \\r \\t \\0 \\\\ \\xHH \\uHHHH and keeps unknown escapes', () => {
    expect(decodeEscapes('\\r\\n|\\t|\\0|\\\\|\\x41|\\u00e9|\\q')).toBe('\r\n|\t|\0|\\|A|é|\\q');
  });
});

describe('socket payloads', () => {
  it('defaults to JSON and to the {"type":"utcp"} discovery message', () => {
    expect(buildSocketPayload({}, { a: [1] }, 'x')).toBe('{"a":[1]}');
    expect(discoveryMessageText(undefined)).toBe('{"type":"utcp"}');
    expect(discoveryMessageText('manual')).toBe('manual');
    expect(discoveryMessageText(null)).toBeUndefined();
  });

  it('rejects an unknown response_byte_format', () => {
    expect(() => decodeResponseBytes(Buffer.from('x'), 'klingon')).toThrow(
      expect.objectContaining({ code: 'INVALID_CONFIG' }),
    );
  });
});

describe('socket discovery results', () => {
  const raw = { call_template_type: 'tcp', host: '${HOST}', port: 4000 };

  it('drops tools of a remote manual that target a loopback-like host, with a warning', () => {
    const manual = {
      tools: [
        { name: 'inherits' },
        { name: 'local', tool_call_template: { call_template_type: 'http', url: 'http://127.0.0.1:9090/x' } },
        { name: 'mapped', tool_call_template: { call_template_type: 'tcp', host: '::ffff:127.0.0.1', port: 1 } },
        { name: 'remote', tool_call_template: { call_template_type: 'tcp', host: 'api.example.com', port: 1 } },
      ],
    };
    const result = socketDiscoveryResult(manual, { rawTemplate: raw, sourceHost: '10.0.0.5', what: 'test' });
    const names = (result.manual as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    expect(names).toEqual(['inherits', 'remote']);
    expect(result.warnings).toHaveLength(2);
    expect(result.warnings![0]).toMatch(/local.*loopback/);
  });

  it('keeps loopback targets when the manual itself came from a loopback host', () => {
    const manual = {
      tools: [{ name: 'local', tool_call_template: { call_template_type: 'tcp', host: 'localhost', port: 1 } }],
    };
    const result = socketDiscoveryResult(manual, {
      rawTemplate: raw,
      sourceHost: 'ws://127.0.0.1:1234/ws',
      what: 'test',
    });
    expect((result.manual as { tools: unknown[] }).tools).toHaveLength(1);
    expect(result.warnings).toEqual([]);
  });

  it('gives tools with an invalid template the raw manual template', () => {
    const result = socketDiscoveryResult(
      { tools: [{ name: 'bad', tool_call_template: 'nope' }] },
      { rawTemplate: raw, sourceHost: '127.0.0.1', what: 'test' },
    );
    expect((result.manual as { tools: Array<{ tool_call_template: unknown }> }).tools[0].tool_call_template).toEqual(
      raw,
    );
  });
});
