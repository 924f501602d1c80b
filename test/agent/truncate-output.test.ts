import { describe, expect, it } from 'vitest';
import { truncateOutput } from '../../src/agent/loop/truncate-output.js';

describe('truncateOutput', () => {
  it('leaves text within the budget untouched', () => {
    expect(truncateOutput('hello', 5)).toEqual({ text: 'hello', truncated: false, cutChars: 0 });
  });

  it('keeps the head and the tail within the budget and says how much was cut', () => {
    const text = `HEAD${'-'.repeat(10_000)}TAIL`;
    const out = truncateOutput(text, 500);
    expect(out.truncated).toBe(true);
    expect(out.text.length).toBeLessThanOrEqual(500);
    expect(out.text.startsWith('HEAD')).toBe(true);
    expect(out.text.endsWith('TAIL')).toBe(true);
    expect(out.text).toContain(`[… ${out.cutChars} of ${text.length} characters cut …]`);
    const [head, tail] = out.text.split(/\n\n\[… \d+ of \d+ characters cut …\]\n\n/);
    expect(head.length + tail.length + out.cutChars).toBe(text.length);
    expect(text.startsWith(head) && text.endsWith(tail)).toBe(true);
  });

  it('never splits a surrogate pair', () => {
    const text = '😀'.repeat(1000);
    const out = truncateOutput(text, 301);
    expect(out.text).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    expect(out.text).not.toMatch(/(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });

  it('returns only the note when the budget is smaller than the note', () => {
    const out = truncateOutput('x'.repeat(100), 10);
    expect(out.text.trim()).toBe('[… 100 of 100 characters cut …]');
  });
});
