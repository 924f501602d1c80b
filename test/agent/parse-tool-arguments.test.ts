import { describe, expect, it } from 'vitest';
import { parseToolArguments } from '../../src/agent/loop/parse-tool-arguments.js';

describe('parseToolArguments', () => {
  it('parses a JSON object', () => {
    expect(parseToolArguments('{"a":1,"b":{"c":[true]}}')).toEqual({ args: { a: 1, b: { c: [true] } } });
  });

  it('reads empty text as no arguments', () => {
    expect(parseToolArguments('')).toEqual({ args: {} });
    expect(parseToolArguments('  \n')).toEqual({ args: {} });
  });

  it('unwraps a double-encoded object', () => {
    expect(parseToolArguments(JSON.stringify(JSON.stringify({ city: 'Paris' })))).toEqual({ args: { city: 'Paris' } });
  });

  it('explains malformed JSON', () => {
    const out = parseToolArguments('{"city": "Par');
    expect('error' in out && out.error).toMatch(
      /^the arguments are not valid JSON \(.+\)\. Send the arguments as one JSON object\.$/,
    );
  });

  it('refuses JSON that is not an object', () => {
    expect(parseToolArguments('[1,2]')).toEqual({ error: 'the arguments must be a JSON object, got an array.' });
    expect(parseToolArguments('null')).toEqual({ error: 'the arguments must be a JSON object, got null.' });
    expect(parseToolArguments('"Paris"')).toEqual({ error: 'the arguments must be a JSON object, got string.' });
  });
});
