/**
 * HTTP tool calls on one local server: sequential latency and throughput at concurrency 16
 * for raw `undici.request` (the floor), utcp-kit, and the official @utcp/sdk + @utcp/http.
 * Run alone: node --import tsx bench/http.ts
 */
import { Agent, request } from 'undici';
import { kit } from './kit.js';

const { UtcpClient } = kit;
import { fmt, stats, type Row } from './lib.js';

/** Starts bench/fixtures-server.mjs in its own process; resolves with its base URL. */
async function startServer() {
  const { spawn } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const child = spawn(process.execPath, [fileURLToPath(new URL('./fixtures-server.mjs', import.meta.url))], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const base = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (d) => resolve(String(d).trim()));
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  return {
    base,
    close: async () => {
      child.stdin!.end();
      await new Promise((r) => child.once('exit', r));
    },
  };
}

type Call = () => Promise<unknown>;

/**
 * Sequential latency and concurrency-16 throughput for several subjects, interleaved in blocks
 * (A B C A B C ...) so that warm-up, thermal and neighbour noise hit every subject alike.
 */
async function profileInterleaved(
  subjects: Record<string, Call>,
  blocks: number,
  callsPerBlock: number,
  concurrency: number,
  totalPerBlock: number,
) {
  const latency: Record<string, number[]> = {};
  const throughput: Record<string, number[]> = {};
  for (const [name, call] of Object.entries(subjects)) {
    for (let i = 0; i < 200; i++) await call(); // warm-up
    latency[name] = [];
    throughput[name] = [];
  }
  for (let b = 0; b < blocks; b++) {
    for (const [name, call] of Object.entries(subjects)) {
      for (let i = 0; i < callsPerBlock; i++) {
        const t0 = performance.now();
        await call();
        latency[name].push(performance.now() - t0);
      }
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next++ < totalPerBlock) await call();
        }),
      );
      throughput[name].push(totalPerBlock / ((performance.now() - t0) / 1000));
    }
  }
  return { latency, throughput };
}

export async function benchHttp(options: { quick?: boolean } = {}): Promise<Row[]> {
  const rounds = options.quick ? 500 : 3000;
  const total = options.quick ? 2000 : 10_000;
  const server = await startServer();
  const rows: Row[] = [];
  const agent = new Agent({ keepAliveTimeout: 60_000 });
  const client = await UtcpClient.create();
  const sdk = await import('@utcp/sdk');
  await import('@utcp/http');
  // The official SDK logs every call to the console; silence it so we time the calls, not the terminal.
  const log = console.log;
  console.log = () => {};
  try {
    const reg = await client.registerManual({ name: 'bench', call_template_type: 'http', url: `${server.base}/utcp` });
    if (!reg.success) throw new Error(reg.errors.join());
    const official = await sdk.UtcpClient.create(process.cwd(), {} as never);
    const r = await official.registerManual({
      name: 'bench',
      call_template_type: 'http',
      url: `${server.base}/utcp`,
      http_method: 'GET',
    } as never);
    if (!r.success) throw new Error(r.errors.join());
    const blocks = options.quick ? 3 : 8;
    const { latency, throughput } = await profileInterleaved(
      {
        // The floor: undici.request on a keep-alive agent, parsing the JSON body.
        'undici.request': async () =>
          (await request(`${server.base}/weather?city=paris`, { dispatcher: agent })).body.json(),
        'utcp-kit': () => client.callTool('bench.weather', { city: 'paris' }),
        '@utcp/sdk': () => official.callTool('bench.weather', { city: 'paris' }),
      },
      blocks,
      Math.round(rounds / blocks),
      16,
      Math.round(total / blocks),
    );
    for (const subject of Object.keys(latency)) {
      const l = stats(latency[subject]);
      const t = stats(throughput[subject]);
      const note =
        subject === '@utcp/sdk'
          ? 'console output silenced'
          : subject === 'utcp-kit'
            ? 'argument validation on'
            : undefined;
      rows.push({
        suite: 'http',
        case: 'sequential call latency',
        subject,
        unit: 'ms',
        value: l.median,
        p90: l.p90,
        rounds: l.rounds,
        note,
      });
      rows.push({
        suite: 'http',
        case: 'throughput at concurrency 16',
        subject,
        unit: 'ops/s',
        value: t.median,
        rounds: t.rounds,
        note,
      });
    }
  } finally {
    console.log = log;
    await client.close();
    await agent.close();
    await server.close();
  }
  const get = (subject: string, c: string) => rows.find((r) => r.subject === subject && r.case === c)!;
  const rawLat = get('undici.request', 'sequential call latency');
  const lat = get('utcp-kit', 'sequential call latency');
  lat.vs = 'undici.request';
  const overhead = lat.value / rawLat.value;
  lat.ratio = 1 / overhead;
  Object.assign(lat, {
    target: 'within 5% of raw undici',
    met: overhead <= 1.05,
    note: `${((overhead - 1) * 100).toFixed(1)}% over raw undici (${((lat.value - rawLat.value) * 1000).toFixed(0)} µs). Per call utcp-kit looks the tool up, validates the arguments, substitutes variables, applies the URL policy and header checks, arms the call deadline and the template timeout, and maps the response; the request itself goes through undici's dispatch with a collecting handler, cheaper than undici.request`,
  });
  const thr = get('utcp-kit', 'throughput at concurrency 16');
  const thrRaw = get('undici.request', 'throughput at concurrency 16');
  const thrSdk = get('@utcp/sdk', 'throughput at concurrency 16');
  thr.vs = 'undici.request';
  thr.ratio = thr.value / thrRaw.value;
  Object.assign(thr, {
    target: '≥ 1.0× raw undici',
    met: thr.ratio >= 1.0,
    note: `${(thr.value / thrSdk.value).toFixed(1)}× the official SDK. At concurrency 16 both cores are saturated, so throughput is the inverse of CPU per call`,
  });
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await benchHttp({ quick: process.argv.includes('--quick') })) {
    console.log(
      `${r.case.padEnd(30)} ${r.subject.padEnd(16)} ${fmt(r.value).padStart(10)} ${r.unit}${r.ratio ? `  ratio ${r.ratio.toFixed(2)} vs ${r.vs}` : ''}${r.target ? `  [${r.met ? 'met' : 'MISSED'}: ${r.target}]` : ''}`,
    );
  }
}
