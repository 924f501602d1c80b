/**
 * What tracing costs on the call path (docs/design/observability.md#overhead): `callTool` of an in-process function
 * tool (the cheapest call there is, so the check weighs most) with nothing listening, with a diagnostics channel
 * subscriber, and with the OpenTelemetry SDK registered; and the listening check alone.
 */
import { tracingChannel } from 'node:diagnostics_channel';
import { measure, type Row } from './lib.js';

const CALLS = 5_000;

export async function benchTracing(options: { quick?: boolean } = {}): Promise<Row[]> {
  const rounds = options.quick ? 5 : 15;
  const { UtcpClient } = await import(new URL('../dist/index.js', import.meta.url).href);
  const { tracing } = await import(new URL('../dist/internal.js', import.meta.url).href);
  const client = await UtcpClient.create({});
  await client.registerFunctions('local', [{ name: 'one', handler: () => 1 }]);
  const calls = async () => {
    for (let i = 0; i < CALLS; i++) await client.callTool('local.one', {});
  };
  const perSecond = (ms: number) => (CALLS / ms) * 1000;
  const row = (subject: string, st: { median: number; p90: number; rounds: number }, note?: string): Row => ({
    suite: 'tracing',
    case: 'callTool, in-process tool',
    subject,
    unit: 'ops/s',
    value: perSecond(st.median),
    p90: perSecond(st.p90),
    rounds: st.rounds,
    ...(note ? { note } : {}),
  });
  try {
    const absent = await measure(calls, rounds, 2);

    const channel = tracingChannel('utcp-kit:tool');
    const handlers = { start() {}, end() {}, asyncStart() {}, asyncEnd() {}, error() {} };
    channel.subscribe(handlers);
    const withChannel = await measure(calls, rounds, 2);
    channel.unsubscribe(handlers);

    const { trace } = await import('@opentelemetry/api');
    const { BasicTracerProvider, SimpleSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
    const discard = {
      export: (_s: unknown, done: (r: { code: number }) => void) => done({ code: 0 }),
      shutdown: async () => {},
    };
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(discard)] });
    trace.setGlobalTracerProvider(provider);
    const withOtel = await measure(calls, rounds, 2);
    trace.disable();
    await provider.shutdown();

    const checks = 1_000_000;
    let listening = 0; // counted so the loop cannot be optimised away
    const check = await measure(() => {
      for (let i = 0; i < checks; i++) if (tracing('tool')) listening++;
    }, rounds);
    if (listening !== 0) throw new Error('bench: something listened during the check');
    const checkNs = (check.median * 1e6) / checks;
    const callNs = (absent.median * 1e6) / CALLS;
    return [
      row('nothing listening', absent, `the listening check is ${((checkNs / callNs) * 100).toFixed(2)}% of a call`),
      row('diagnostics channel subscribed', withChannel),
      row('OpenTelemetry SDK registered', withOtel, 'BasicTracerProvider, SimpleSpanProcessor, discarding exporter'),
      {
        suite: 'tracing',
        case: 'listening check (tracing())',
        subject: 'nothing listening',
        unit: 'ops/s',
        value: checks / (check.median / 1000),
        rounds: check.rounds,
        note: `${checkNs.toFixed(1)} ns per check`,
      },
    ];
  } finally {
    await client.close();
  }
}
