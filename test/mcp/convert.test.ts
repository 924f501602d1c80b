import { describe, expect, it } from 'vitest';
import {
  isLiteralObject,
  toCallToolResult,
  toErrorResult,
  toInputSchema,
  toOutputSchema,
} from '../../src/mcp/convert.js';
import { encodeMcpToolName, isValidMcpToolName } from '../../src/mcp/mcp-tool-names.js';

describe('encodeMcpToolName', () => {
  it('keeps a valid <manual>.<tool> name', () => {
    expect(encodeMcpToolName('github.list_repos-v2')).toBe('github.list_repos-v2');
  });

  it('replaces invalid characters and adds a hash of the original', () => {
    expect(encodeMcpToolName('demo.get /users/{id}')).toMatch(/^demo\.get__users__id__[0-9a-f]{8}$/);
  });

  it('gives distinct names to names that differ only in invalid characters', () => {
    expect(encodeMcpToolName('demo.a b')).not.toBe(encodeMcpToolName('demo.a/b'));
  });

  it('never produces the name of a tool that needed no encoding', () => {
    expect(encodeMcpToolName('demo.a b')).not.toBe('demo.a_b');
  });

  it('cuts long names to 128 characters and keeps them distinct', () => {
    const a = encodeMcpToolName(`demo.${'x'.repeat(200)}a`);
    const b = encodeMcpToolName(`demo.${'x'.repeat(200)}b`);
    expect(a).toHaveLength(128);
    expect(isValidMcpToolName(a)).toBe(true);
    expect(a).not.toBe(b);
  });

  it('is stable', () => {
    expect(encodeMcpToolName('demo.é')).toBe(encodeMcpToolName('demo.é'));
  });
});

describe('toInputSchema', () => {
  it('adds type object when missing', () => {
    expect(toInputSchema({ properties: { a: { type: 'string' } } })).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
    });
  });

  it('turns a missing schema into an empty object schema', () => {
    expect(toInputSchema(undefined)).toEqual({ type: 'object' });
  });

  it('normalises a nullable object root to type object', () => {
    expect(toInputSchema({ type: ['object', 'null'], required: ['a'] })).toEqual({ type: 'object', required: ['a'] });
  });

  it('replaces a non-object root with a bare object schema', () => {
    expect(toInputSchema({ type: 'string' })).toEqual({ type: 'object' });
  });
});

describe('toOutputSchema', () => {
  it('keeps an object schema', () => {
    expect(toOutputSchema({ type: 'object', properties: { n: { type: 'number' } } })).toEqual({
      type: 'object',
      properties: { n: { type: 'number' } },
    });
  });

  it.each([[{}], [{ type: 'array' }], [{ type: 'string' }], [undefined]])('omits %j', (schema) => {
    expect(toOutputSchema(schema)).toBeUndefined();
  });
});

describe('toCallToolResult', () => {
  it('passes strings through as text', () => {
    expect(toCallToolResult('hello')).toEqual({ content: [{ type: 'text', text: 'hello' }] });
  });

  it('adds structuredContent for plain objects', () => {
    expect(toCallToolResult({ a: 1 })).toEqual({
      content: [{ type: 'text', text: '{"a":1}' }],
      structuredContent: { a: 1 },
    });
  });

  it('serves a media result as MCP image/audio content, structuredContent only when asked', () => {
    const image = { type: 'image', mimeType: 'image/png', data: 'iVBORw0KGgo=' };
    expect(toCallToolResult(image)).toEqual({ content: [image] });
    expect(toCallToolResult({ type: 'audio', mimeType: 'audio/wav', data: 'UklGRg==' }, { structured: true })).toEqual({
      content: [{ type: 'audio', mimeType: 'audio/wav', data: 'UklGRg==' }],
      structuredContent: { type: 'audio', mimeType: 'audio/wav', data: 'UklGRg==' },
    });
    // Not exactly the media shape: an ordinary object.
    const more = { ...image, caption: 'x' };
    expect(toCallToolResult(more)).toEqual({
      content: [{ type: 'text', text: JSON.stringify(more) }],
      structuredContent: more,
    });
  });

  it('stringifies numbers, arrays and null without structuredContent', () => {
    expect(toCallToolResult(3)).toEqual({ content: [{ type: 'text', text: '3' }] });
    expect(toCallToolResult([1])).toEqual({ content: [{ type: 'text', text: '[1]' }] });
    expect(toCallToolResult(null)).toEqual({ content: [{ type: 'text', text: 'null' }] });
    expect(toCallToolResult(undefined)).toEqual({ content: [{ type: 'text', text: 'null' }] });
  });

  it('writes bigints as strings in text and structuredContent', () => {
    expect(toCallToolResult({ n: 10n })).toEqual({
      content: [{ type: 'text', text: '{"n":"10"}' }],
      structuredContent: { n: '10' },
    });
  });

  it('survives circular objects with text only', () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    const result = toCallToolResult(loop);
    expect(result.structuredContent).toBeUndefined();
    expect(result.content[0].type).toBe('text');
  });
});

describe('isLiteralObject', () => {
  it('accepts literals and null-prototype objects only', () => {
    expect(isLiteralObject({})).toBe(true);
    expect(isLiteralObject(Object.create(null))).toBe(true);
    expect(isLiteralObject([])).toBe(false);
    expect(isLiteralObject(new Date())).toBe(false);
    expect(isLiteralObject(Buffer.from('x'))).toBe(false);
  });
});

describe('toErrorResult', () => {
  it('returns the error message with isError', () => {
    expect(toErrorResult(new Error('nope'))).toEqual({ content: [{ type: 'text', text: 'nope' }], isError: true });
  });
});
