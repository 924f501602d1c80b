import { EventEmitter, getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createDeadline } from '../../src/core/deadline.js';
import { UtcpAbortError, UtcpLimitError, UtcpTimeoutError } from '../../src/core/errors.js';
import { AsyncQueue, type AsyncQueueOptions } from '../../src/transports/shared/async-queue.js';

function queueOf<T = number>(options: Partial<AsyncQueueOptions<T>> = {}) {
  return new AsyncQueue<T>({ what: 'test stream', maxBufferedBytes: 1024 * 1024, ...options });
}

async function drain<T>(queue: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of queue) out.push(item);
  return out;
}

describe('AsyncQueue', () => {
  it('hands out buffered and later items in order, then ends after end()', async () => {
    const queue = queueOf();
    queue.push(1);
    queue.push(2);
    const pending = queue.take();
    expect(await pending).toEqual({ done: false, value: 1 });
    expect(await queue.take()).toEqual({ done: false, value: 2 });
    const waiting = queue.take();
    queue.push(3);
    expect(await waiting).toEqual({ done: false, value: 3 });
    queue.push(4);
    queue.end();
    expect(queue.push(5)).toBe(false);
    expect(await drain(queue)).toEqual([4]);
    expect(await queue.take()).toEqual({ done: true, value: undefined });
  });

  it('wakes a pending pull when the stream ends or fails', async () => {
    const ended = queueOf();
    const a = ended.take();
    ended.end();
    expect(await a).toEqual({ done: true, value: undefined });

    const failed = queueOf();
    const b = failed.take();
    failed.fail(new Error('boom'));
    await expect(b).rejects.toThrow('boom');
    expect(await failed.take()).toEqual({ done: true, value: undefined });
  });

  it('throws fail() after the items pushed before it, once, and ignores later ends', async () => {
    const queue = queueOf();
    queue.push(1);
    queue.push(2);
    queue.fail(new Error('cut off'));
    queue.end();
    expect(queue.push(3)).toBe(false);
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const item of queue) seen.push(item);
      })(),
    ).rejects.toThrow('cut off');
    expect(seen).toEqual([1, 2]);
    expect(await queue.take()).toEqual({ done: true, value: undefined });
  });

  it('iterates a real emitter until its end event', async () => {
    const emitter = new EventEmitter();
    const queue = queueOf<string>();
    emitter.on('data', (s: string) => queue.push(s));
    emitter.on('end', () => queue.end());
    const result = drain(queue);
    for (const s of ['a', 'b', 'c']) {
      await new Promise((r) => setImmediate(r));
      emitter.emit('data', s);
    }
    emitter.emit('end');
    expect(await result).toEqual(['a', 'b', 'c']);
  });

  it('ends a pending pull with the typed abort error and leaves no listener behind', async () => {
    const controller = new AbortController();
    const queue = queueOf({ signal: controller.signal });
    const served = queue.take();
    queue.push(1);
    await served;
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    const pending = queue.take();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(UtcpAbortError);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    // Buffered items are not handed out after the abort.
    queue.push(2);
    await expect(queue.take()).rejects.toThrow('test stream was aborted');
  });

  it('maps a deadline to UtcpTimeoutError, per pull signal', async () => {
    const queue = queueOf();
    const deadline = createDeadline(undefined, 20, 'test stream');
    const error = await queue.take(deadline.signal, 20).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UtcpTimeoutError);
    expect((error as UtcpTimeoutError).timeoutMs).toBe(20);
    // The queue itself is still usable with another signal.
    queue.push(7);
    expect(await queue.take(new AbortController().signal)).toEqual({ done: false, value: 7 });
  });

  it('fails with UtcpLimitError when more than the bound waits unread, and stops the producer once', async () => {
    let stops = 0;
    const queue = queueOf<Buffer>({ maxBufferedBytes: 1000, sizeOf: (b) => b.length, onStop: () => stops++ });
    // One item alone may be larger than the bound (it is bounded where it is read).
    expect(queue.push(Buffer.alloc(5000))).toBe(true);
    expect((await queue.take()).value).toHaveLength(5000);
    expect(queue.push(Buffer.alloc(600))).toBe(true);
    expect(queue.push(Buffer.alloc(600))).toBe(false);
    expect(queue.push(Buffer.alloc(1))).toBe(false);
    expect(stops).toBe(1);
    expect(queue.size).toBe(0);
    const error = await queue.take().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UtcpLimitError);
    expect(error).toMatchObject({ code: 'LIMIT_EXCEEDED', limit: 'max_response_bytes' });
    expect((error as Error).message).toContain('test stream');
    expect(await queue.take()).toEqual({ done: true, value: undefined });
    expect(stops).toBe(1);
  });

  it('counts a minimum per item, so many empty items hit the bound too', async () => {
    const queue = queueOf<string>({ maxBufferedBytes: 64 * 10 });
    let accepted = 0;
    while (queue.push('')) accepted++;
    expect(accepted).toBe(10);
    await expect(queue.take()).rejects.toBeInstanceOf(UtcpLimitError);
  });

  it('pauses the producer at the high-water mark and resumes it once drained below half', async () => {
    const calls: string[] = [];
    const queue = queueOf({
      highWaterItems: 4,
      flow: { pause: () => calls.push('pause'), resume: () => calls.push('resume') },
    });
    for (let i = 0; i < 3; i++) queue.push(i);
    expect(calls).toEqual([]);
    queue.push(3);
    expect(calls).toEqual(['pause']);
    queue.push(4); // a paused producer may still deliver what it had
    expect(calls).toEqual(['pause']);
    await queue.take();
    await queue.take();
    await queue.take();
    expect(calls).toEqual(['pause']);
    await queue.take(); // 1 left: below half of 4
    expect(calls).toEqual(['pause', 'resume']);
  });

  it('also pauses when half the byte bound waits', () => {
    const calls: string[] = [];
    const queue = queueOf<Buffer>({
      maxBufferedBytes: 1000,
      sizeOf: (b) => b.length,
      flow: { pause: () => calls.push('pause'), resume: () => calls.push('resume') },
    });
    queue.push(Buffer.alloc(300));
    expect(calls).toEqual([]);
    queue.push(Buffer.alloc(300));
    expect(calls).toEqual(['pause']);
  });

  it('return() (break) drops the buffer, ends pending pulls, resumes the producer and calls onStop once', async () => {
    const calls: string[] = [];
    const queue = queueOf({
      highWaterItems: 2,
      flow: { pause: () => calls.push('pause'), resume: () => calls.push('resume') },
      onStop: () => calls.push('stop'),
    });
    queue.push(1);
    queue.push(2);
    queue.push(3);
    for await (const item of queue) {
      expect(item).toBe(1);
      break;
    }
    expect(calls).toEqual(['pause', 'resume', 'stop']);
    expect(queue.size).toBe(0);
    expect(queue.push(4)).toBe(false);
    expect(await queue.take()).toEqual({ done: true, value: undefined });
    await queue.return();
    expect(calls).toEqual(['pause', 'resume', 'stop']);

    const waiting = queueOf();
    const pending = waiting.take();
    await waiting.return();
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  it('a stream read to its end never calls onStop', async () => {
    let stops = 0;
    const queue = queueOf({ onStop: () => stops++ });
    queue.push(1);
    queue.end();
    expect(await drain(queue)).toEqual([1]);
    // for-await does not call return() after the iterator says done.
    expect(stops).toBe(0);
  });

  it('keeps order and bounded memory across many items', async () => {
    const queue = queueOf<number>({ maxBufferedBytes: 64 * 5000 });
    const n = 20_000;
    let next = 0;
    const consumer = (async () => {
      const seen: number[] = [];
      for await (const item of queue) seen.push(item);
      return seen;
    })();
    while (next < n) {
      for (let i = 0; i < 3000 && next < n; i++) queue.push(next++);
      await new Promise((r) => setImmediate(r));
    }
    queue.end();
    const seen = await consumer;
    expect(seen).toHaveLength(n);
    expect(seen.every((v, i) => v === i)).toBe(true);
  });
});
