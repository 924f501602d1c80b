/**
 * The end-of-stream judgements shared by the streaming transports (docs/design/transports.md#cut-off-streams):
 * where an event stream ended (at an event boundary or inside an event) and whether an unterminated last line is whole.
 */
import { describe, expect, it } from 'vitest';
import { EventStreamDecoder } from '../../src/http/http-event-stream.js';
import { isCompleteLastLine } from '../../src/transports/shared/stream-end.js';

function endedMidEvent(...chunks: string[]): boolean {
  const decoder = new EventStreamDecoder(1024, 'test');
  for (const chunk of chunks) decoder.push(Buffer.from(chunk));
  return decoder.endedMidEvent();
}

describe('EventStreamDecoder.endedMidEvent', () => {
  it('is false at an event boundary, with any line ending, and for an empty body', () => {
    expect(endedMidEvent('')).toBe(false);
    expect(endedMidEvent('data: 1\n\n')).toBe(false);
    expect(endedMidEvent('data: 1\r\n\r\n')).toBe(false);
    expect(endedMidEvent('data: 1\r\r')).toBe(false);
    expect(endedMidEvent('data: 1\r', '\n\r\n')).toBe(false);
    expect(endedMidEvent('event: a\ndata: 1\nid: 3\n\n')).toBe(false);
    expect(endedMidEvent('data: a\rdata: b\ndata: c\r\n\r\n: x\r\n')).toBe(false);
    expect(endedMidEvent('\ufeffdata: 1\n\n')).toBe(false);
    expect(endedMidEvent('data: a\rdata: b\ndata: c\r\n')).toBe(true);
  });

  it('ignores comment lines, complete or not', () => {
    expect(endedMidEvent('data: 1\n\n: heartbeat\n')).toBe(false);
    expect(endedMidEvent('data: 1\n\n: heartb')).toBe(false);
    expect(endedMidEvent(': only comments\n:\n')).toBe(false);
  });

  it('is true inside an event: a field line without its blank line, a partial line, a partial character', () => {
    expect(endedMidEvent('data: 1\n')).toBe(true);
    expect(endedMidEvent('data: 1\n\ndata: {"a":')).toBe(true);
    expect(endedMidEvent('data: 1\n\nevent: x\n')).toBe(true);
    expect(endedMidEvent('data: 1\n\nda')).toBe(true);
    expect(endedMidEvent('data: 1\r\n\r\ndata: 2\r\n')).toBe(true);
    expect(endedMidEvent(': c\ndata: x\n')).toBe(true);
    const decoder = new EventStreamDecoder(1024, 'test');
    decoder.push(Buffer.from('data: 1\n\n'));
    decoder.push(Buffer.from([0xe2, 0x82])); // the first two bytes of "€"
    expect(decoder.endedMidEvent()).toBe(true);
  });

  it('follows boundaries split across chunks', () => {
    expect(endedMidEvent('data: 1\n', '\n')).toBe(false);
    expect(endedMidEvent('data', ': 1\n', '\n', 'data: 2', '\n\n')).toBe(false);
    expect(endedMidEvent('data: 1\n\n', 'data: 2\n')).toBe(true);
  });

  it('starts over after reset()', () => {
    const decoder = new EventStreamDecoder(1024, 'test');
    decoder.push(Buffer.from('data: 1\n'));
    decoder.reset();
    decoder.push(Buffer.from('data: 2\n\n'));
    expect(decoder.endedMidEvent()).toBe(false);
  });
});

describe('isCompleteLastLine', () => {
  it('accepts values that close themselves', () => {
    for (const text of ['{"a":1}', '[1,2]', '"s"', 'true', 'false', 'null', '  {"a":[1]}  ', '']) {
      expect(isCompleteLastLine(text), text).toBe(true);
    }
  });

  it('refuses partial values, bare numbers and text', () => {
    for (const text of ['{"a":1', '[1,', '"abc', 'tru', '12', '-1.5', 'hello', '{"a":"}"']) {
      expect(isCompleteLastLine(text), text).toBe(false);
    }
  });
});
