/**
 * The `CallOptions` a transport receives for one call (docs/design/http-exchange.md#per-call-cost): the same own keys
 * as ever, `signal` an own enumerable getter (so a spread copy carries a working signal), and the call's deadline
 * found by `callScope` on the original only (docs/design/http-exchange.md#lazy-signal).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { callScope, Deadline } from '../../src/core/deadline.js';
import { UtcpClient, type CallOptions } from '../../src/index.js';
import { recordingTransport } from '../helpers/recording-transport.js';

let client: UtcpClient | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

/** A client whose `probe` transport hands each call's options to `onCall` and waits for `release`. */
async function probeClient(onCall: (options: CallOptions) => unknown) {
  const { factory } = recordingTransport(
    'probe',
    () => ({
      manual: {
        utcp_version: '1.0.1',
        tools: [{ name: 'go', inputs: {}, tool_call_template: { call_template_type: 'probe' } }],
      },
    }),
    (_args, _template, options) => onCall(options),
  );
  client = await UtcpClient.create({}, { transports: { probe: { create: factory } } as never });
  const reg = await client.registerManual({ name: 'm', call_template_type: 'probe' });
  expect(reg.errors).toEqual([]);
  return client;
}

describe('the CallOptions of a tool call', () => {
  it('has the same own keys in the same order, and signal as an own enumerable getter', async () => {
    const seen: CallOptions[] = [];
    const c = await probeClient((options) => {
      seen.push(options);
      return 'ok';
    });
    const gate = { allow: () => true };
    await c.callTool('m.go', {}, { timeoutMs: 5_000, raw: true });
    await c.callTool('m.go', {}, { callGate: gate as never });
    expect(Object.keys(seen[0])).toEqual([
      'signal',
      'onProgress',
      'manualName',
      'rawTemplate',
      'timeoutMs',
      'deadline',
      'raw',
      'remoteSource',
      'resilience',
    ]);
    expect(Object.keys(seen[1])).toEqual([
      'signal',
      'onProgress',
      'callGate',
      'manualName',
      'rawTemplate',
      'timeoutMs',
      'deadline',
      'raw',
      'remoteSource',
      'resilience',
    ]);
    const descriptor = Object.getOwnPropertyDescriptor(seen[0], 'signal')!;
    expect(typeof descriptor.get).toBe('function');
    expect(descriptor.enumerable).toBe(true);
    expect(seen[0]).toMatchObject({ manualName: 'm', timeoutMs: 5_000, raw: true, remoteSource: false });
    expect(seen[1].callGate).toBe(gate);
  });

  it('gives a spread copy a working signal, and callScope follows the call only on the original', async () => {
    let copy: CallOptions | undefined;
    let scopeOfOriginal: unknown;
    let scopeOfCopy: unknown;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const c = await probeClient(async (options) => {
      scopeOfOriginal = callScope(options);
      copy = { ...options };
      scopeOfCopy = callScope(copy);
      started();
      await new Promise((resolve) => copy!.signal.addEventListener('abort', resolve, { once: true }));
      throw copy!.signal.reason;
    });
    const caller = new AbortController();
    const result = c.callTool('m.go', {}, { signal: caller.signal });
    await running;
    expect(scopeOfOriginal).toBeInstanceOf(Deadline);
    expect(copy!.signal).toBeInstanceOf(AbortSignal);
    expect(scopeOfCopy).toBe(copy!.signal);
    expect(copy!.signal.aborted).toBe(false);
    caller.abort();
    await expect(result).rejects.toMatchObject({ code: 'ABORTED' });
    expect(copy!.signal.aborted).toBe(true);
  });
});
