/**
 * wait_for checks only new output plus a 64 KiB overlap on each chunk (docs/design/security.md#untrusted-regex):
 * matches in later chunks, across chunk boundaries and after the ring dropped bytes are still found, and `^` still
 * means the start of the output read.
 */
import { describe, expect, it } from 'vitest';
import { OutputBuffer } from '../../src/tools/processes.js';
import { untrustedPattern, waitMatcher } from '../../src/tools/regex.js';

async function watcher(pattern: string, capacity = 1024 * 1024, cursor = 0) {
  const output = new OutputBuffer(capacity, 1024);
  const check = waitMatcher(output, cursor, await untrustedPattern('bash_output', 'wait_for', pattern));
  /** Writes `text` (in chunks of `size` bytes) and runs the check after each chunk, as the data events do. */
  const feed = (text: string | Buffer, size = 4096): boolean => {
    const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
    for (let i = 0; i < bytes.length; i += size) {
      output.write(bytes.subarray(i, i + size));
      if (check()) return true;
    }
    return false;
  };
  return { output, check, feed };
}

describe('wait_for on a growing output', () => {
  it('finds a match that arrives after 1 MiB of output, in the chunk that brings it', async () => {
    const { feed } = await watcher('listening on \\d+');
    expect(feed('filler line\n'.repeat(90_000))).toBe(false);
    expect(feed('listening on 8080\n')).toBe(true);
  });

  it('finds a match split across two chunks, also a multi-byte character split in the middle', async () => {
    const a = await watcher('ready');
    expect(a.feed('x'.repeat(100_000) + 're', 100_002)).toBe(false);
    expect(a.feed('ady', 3)).toBe(true);
    const b = await watcher('é!');
    const bytes = Buffer.from(`${'y'.repeat(70_000)}é!`);
    expect(b.feed(bytes.subarray(0, bytes.length - 2), bytes.length)).toBe(false);
    expect(b.feed(bytes.subarray(bytes.length - 2), 2)).toBe(true);
  });

  it('keeps `^` at the start of the output read: a later line start does not match', async () => {
    const { feed } = await watcher('^ready');
    expect(feed(`x\n${'z'.repeat(200_000)}\nready\n`)).toBe(false);
    const again = await watcher('(?m)^ready');
    expect(again.feed(`x\n${'z'.repeat(200_000)}\nready\n`)).toBe(true);
  });

  it('finds a match after the ring buffer dropped older output', async () => {
    const { feed, output } = await watcher('done', 8 * 1024);
    expect(feed('n'.repeat(500_000))).toBe(false);
    expect(feed('done')).toBe(true);
    expect(output.read(0, 10).dropped).toBeGreaterThan(0);
  });

  it('does linear work: 4 MiB in 4 KiB chunks is checked in about 0.1 s; re-reading the whole ring took 4.7 s', async () => {
    const { feed } = await watcher('\\d{3}-\\d{4}');
    const started = performance.now();
    expect(feed('x'.repeat(4 * 1024 * 1024))).toBe(false);
    // About 70 MB scanned in all (64 KiB of overlap per chunk); re-reading the 1 MiB ring on each chunk was 1,000 MB.
    expect(performance.now() - started).toBeLessThan(2_000);
  }, 60_000);
});
