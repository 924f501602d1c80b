/**
 * The small forms of the deadline helper every transport, the agent and the tools use instead of their own timers
 * and abort listeners (docs/design/http-exchange.md#one-home).
 */
import { describe, expect, it } from 'vitest';
import {
  createDeadline,
  idleTimer,
  onAbort,
  raceAbort,
  remainingMs,
  settledWithin,
  sleep,
} from '../../src/core/deadline.js';

describe('deadline helpers', () => {
  it('onAbort fires once, at once on an aborted signal, and not after its remover ran', () => {
    const seen: unknown[] = [];
    const controller = new AbortController();
    const off = onAbort(controller.signal, (reason) => seen.push(reason));
    const removed = onAbort(controller.signal, () => seen.push('removed one'));
    removed();
    controller.abort('first');
    controller.abort('second');
    off();
    onAbort(controller.signal, (reason) => seen.push(`late ${reason}`));
    expect(seen).toEqual(['first', 'late first']);
  });

  it('raceAbort rejects at once with the chosen error and hands the lost promise over for clean-up', async () => {
    const controller = new AbortController();
    let resolveWork!: (v: string) => void;
    const work = new Promise<string>((resolve) => (resolveWork = resolve));
    const lost: Promise<string>[] = [];
    const raced = raceAbort(
      work,
      controller.signal,
      (reason) => new Error(`stopped: ${reason}`),
      (p) => lost.push(p),
    );
    controller.abort('bye');
    await expect(raced).rejects.toThrow('stopped: bye');
    expect(lost).toEqual([work]);
    resolveWork('late');
    await expect(raceAbort(Promise.resolve(1), new AbortController().signal, () => 'x')).resolves.toBe(1);
  });

  it('sleep waits, and rejects with the reason when the signal aborts', async () => {
    await expect(sleep(1)).resolves.toBeUndefined();
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort(new Error('cancelled'));
    await expect(waiting).rejects.toThrow('cancelled');
    await expect(sleep(1, controller.signal)).rejects.toThrow('cancelled');
  });

  it('settledWithin says whether a promise settled in time, rejections included', async () => {
    expect(await settledWithin(Promise.reject(new Error('x')), 1000)).toBe(true);
    expect(await settledWithin(new Promise(() => {}), 10)).toBe(false);
  });

  it('idleTimer fires only after a quiet period, never while paused, and not at all without a valid delay', async () => {
    let fired = 0;
    const idle = idleTimer(50, () => fired++);
    idle.restart();
    idle.restart();
    idle.pause(); // synchronously: the timer cannot have fired
    await sleep(150);
    expect(fired).toBe(0);
    idle.restart();
    for (const giveUp = Date.now() + 5000; fired === 0 && Date.now() < giveUp; ) await sleep(10);
    expect(fired).toBe(1);
    const never = idleTimer(2 ** 31, () => fired++);
    never.restart();
    never.pause();
    expect(fired).toBe(1);
  });

  it('a deadline knows when it passes, and remainingMs gives the time left', () => {
    const deadline = createDeadline(undefined, 5000, 'work');
    try {
      const at = deadline.deadlineAt!;
      expect(at - Date.now()).toBeGreaterThan(4000);
      expect(remainingMs({ deadline: at })).toBeLessThanOrEqual(5000);
      expect(remainingMs({ deadline: Date.now() - 10 })).toBe(0);
      expect(remainingMs({})).toBeUndefined();
      expect(createDeadline(undefined, undefined, 'no timer').deadlineAt).toBeUndefined();
    } finally {
      deadline.dispose();
    }
  });
});
