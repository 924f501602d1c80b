import { describe, expect, it } from 'vitest';
import { buildWebSocketMessage, templateMentions } from '../../src/transports/shared/socket-payload.js';
import { decodeFrame } from '../../src/transports/websocket/decode-frame.js';
import { toolPathUrl } from '../../src/transports/websocket/ws-settings.js';

const INJECTION = '", "isAdmin": true, "x": "';

describe('websocket message templates', () => {
  it('sends the raw arguments as JSON when message is null', () => {
    expect(buildWebSocketMessage(null, { a: 1, b: 'x' })).toBe('{"a":1,"b":"x"}');
  });

  it('keeps argument types for whole-leaf placeholders in object templates', () => {
    const text = buildWebSocketMessage(
      {
        op: 'run',
        n: 'UTCP_ARG_n_UTCP_ARG',
        obj: 'UTCP_ARG_obj_UTCP_ARG',
        flag: ['UTCP_ARG_flag_UTCP_ARG'],
        nil: 'UTCP_ARG_nil_UTCP_ARG',
      },
      { n: 5, obj: { deep: [1, 'two'] }, flag: false, nil: null },
    );
    expect(JSON.parse(text)).toEqual({ op: 'run', n: 5, obj: { deep: [1, 'two'] }, flag: [false], nil: null });
  });

  it('substitutes text inside longer string leaves (non-strings as JSON) and leaves unknown placeholders', () => {
    const text = buildWebSocketMessage(
      { q: 'find UTCP_ARG_term_UTCP_ARG limit UTCP_ARG_n_UTCP_ARG UTCP_ARG_other_UTCP_ARG' },
      { term: 'cats', n: 3 },
    );
    expect(JSON.parse(text)).toEqual({ q: 'find cats limit 3 UTCP_ARG_other_UTCP_ARG' });
  });

  it('does not substitute object keys', () => {
    expect(JSON.parse(buildWebSocketMessage({ UTCP_ARG_k_UTCP_ARG: 1 }, { k: 'x' }))).toEqual({
      UTCP_ARG_k_UTCP_ARG: 1,
    });
  });

  it('string template: a JSON-injection payload stays inside its string value', () => {
    const text = buildWebSocketMessage('{"q": "UTCP_ARG_q_UTCP_ARG"}', { q: INJECTION });
    expect(JSON.parse(text)).toEqual({ q: INJECTION });
  });

  it('object template: a JSON-injection payload stays inside its string value', () => {
    const text = buildWebSocketMessage({ q: 'UTCP_ARG_q_UTCP_ARG' }, { q: INJECTION });
    expect(JSON.parse(text)).toEqual({ q: INJECTION });
    const embedded = buildWebSocketMessage({ q: 'prefix UTCP_ARG_q_UTCP_ARG' }, { q: INJECTION });
    expect(JSON.parse(embedded)).toEqual({ q: `prefix ${INJECTION}` });
  });

  it('string template that looks like JSON escapes newlines, backslashes and quotes, and inserts non-strings as JSON', () => {
    const text = buildWebSocketMessage('  [ "UTCP_ARG_s_UTCP_ARG", UTCP_ARG_o_UTCP_ARG ]', {
      s: 'a\\b\n"c"',
      o: { k: [1] },
    });
    expect(JSON.parse(text)).toEqual(['a\\b\n"c"', { k: [1] }]);
  });

  it('a non-JSON string template substitutes raw', () => {
    expect(buildWebSocketMessage('say UTCP_ARG_q_UTCP_ARG now', { q: INJECTION })).toBe(`say ${INJECTION} now`);
  });

  it('finds the request_id placeholder at any depth', () => {
    expect(templateMentions({ a: [{ id: 'UTCP_ARG_request_id_UTCP_ARG' }] }, 'request_id')).toBe(true);
    expect(templateMentions('{"id":"UTCP_ARG_request_id_UTCP_ARG"}', 'request_id')).toBe(true);
    expect(templateMentions({ a: 'UTCP_ARG_request_UTCP_ARG' }, 'request_id')).toBe(false);
    expect(templateMentions(null, 'request_id')).toBe(false);
  });
});

describe('websocket frame decoding', () => {
  const text = (s: string) => ({ data: Buffer.from(s), isBinary: false });
  const binary = (s: string) => ({ data: Buffer.from(s), isBinary: true });

  it('null format: JSON text parsed, other text kept, binary as Uint8Array', () => {
    expect(decodeFrame(text('{"a":1}'), null).value).toEqual({ a: 1 });
    expect(decodeFrame(text('hello'), null).value).toBe('hello');
    const bytes = decodeFrame(binary('{"a":1}'), null).value;
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(bytes as Uint8Array).toString()).toBe('{"a":1}');
  });

  it('json format parses binary frames too and falls back to the string', () => {
    expect(decodeFrame(binary('[1,2]'), 'json').value).toEqual([1, 2]);
    expect(decodeFrame(text('not json'), 'json').value).toBe('not json');
  });

  it('text format returns strings; raw returns strings for text and bytes for binary', () => {
    expect(decodeFrame(text('{"a":1}'), 'text').value).toBe('{"a":1}');
    expect(decodeFrame(binary('x'), 'text').value).toBe('x');
    expect(decodeFrame(text('{"a":1}'), 'raw').value).toBe('{"a":1}');
    expect(decodeFrame(binary('x'), 'raw').value).toBeInstanceOf(Uint8Array);
  });
});

describe('path_per_tool URLs', () => {
  it('replaces a trailing /tools with /<tool> and keeps the query', () => {
    expect(toolPathUrl('ws://127.0.0.1:80/api/tools?k=1', 'echo')).toBe('ws://127.0.0.1/api/echo?k=1');
    expect(toolPathUrl('wss://h.example/tools/', 'a b')).toBe('wss://h.example/a%20b');
    expect(toolPathUrl('wss://h.example', 'x')).toBe('wss://h.example/x');
  });
});
