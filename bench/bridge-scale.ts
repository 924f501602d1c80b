/**
 * Tool calls per second through a round-robin proxy in front of 1 to 4 `utcp serve-mcp --http --stateless` processes
 * (the built CLI) sharing one PostgreSQL catalog (docs/design/transports.md#mcp-bridge-scaling).
 *
 * The load: the official v2 client's own `tools/call` request on protocol 2026-07-28 (captured once, headers and
 * body), replayed with a fresh id by `CONCURRENCY` callers over keep-alive connections for a fixed time, so the
 * client's own work stays small next to the bridges'. Each call goes proxy → bridge → an HTTP tool on 127.0.0.1.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startBridgeProcess, startCalcApi, startRoundRobinProxy } from '../test/helpers/bridge-farm.js';
import { startPostgres } from '../test/helpers/postgres-server.js';
import { kit } from './kit.js';
import type { Row } from './lib.js';

const TOKEN = 'bench-bridge-token-0123456789abcdef';
const CONCURRENCY = 32;

/** CPU seconds (user + system) a process has used, from /proc (Linux; undefined elsewhere or once it is gone). */
function cpuSeconds(pid: number): number | undefined {
  try {
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15 (in clock ticks, 100/s).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** The PostgreSQL server listening on `port` and its backends (their parent), from /proc; empty elsewhere. */
function postgresPids(port: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return [];
  }
  const read = (pid: string, file: string) => {
    try {
      return readFileSync(`/proc/${pid}/${file}`, 'utf8');
    } catch {
      return '';
    }
  };
  const main = entries.find((pid) => {
    const argv = read(pid, 'cmdline').split('\0');
    return argv.some((a) => a.endsWith('/postgres')) && argv.includes(String(port));
  });
  if (!main) return [];
  const children = entries.filter((pid) => read(pid, 'stat').split(') ')[1]?.split(' ')[1] === main);
  return [main, ...children].map(Number);
}

const sum = (pids: number[]) => pids.reduce((total, pid) => total + (cpuSeconds(pid) ?? 0), 0);

interface Captured {
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** Connects the official client through `url` and captures the HTTP request it sends for one tools/call. */
async function captureCall(url: string): Promise<Captured> {
  let captured: Captured | undefined;
  const spy: typeof fetch = async (input, init) => {
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    if (body?.method === 'tools/call')
      captured = { headers: Object.fromEntries(new Headers(init?.headers).entries()), body };
    return fetch(input, init);
  };
  const mcp = new Client({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      fetch: spy,
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    }),
  );
  const result = await mcp.callTool({ name: 'calc.add', arguments: { a: 1, b: 2 } });
  await mcp.close();
  if (!captured || JSON.stringify(result.structuredContent) !== '{"sum":3}')
    throw new Error(`bridge-scale: the reference call failed: ${JSON.stringify(result)}`);
  return captured;
}

/** Replays the captured call for `ms` with CONCURRENCY callers; returns calls/s. Every answer must carry the sum. */
async function replay(url: string, call: Captured, ms: number): Promise<number> {
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let id = 1000;
  let done = 0;
  const end = performance.now() + ms;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const body = JSON.stringify({ ...call.body, id: id++ });
      const req = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          headers: { ...call.headers, 'content-length': Buffer.byteLength(body) },
          agent,
          timeout: 30_000,
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () =>
            res.statusCode === 200 && text.includes('"sum"')
              ? resolve()
              : reject(new Error(`bridge-scale: call answered ${res.statusCode}: ${text.slice(0, 200)}`)),
          );
        },
      );
      req.on('timeout', () => req.destroy(new Error('bridge-scale: a call took over 30 s')));
      req.on('error', reject);
      req.end(body);
    });
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        await one();
        done++;
      }
    }),
  );
  const elapsed = performance.now() - t0;
  agent.destroy();
  return (done / elapsed) * 1000;
}

export async function benchBridgeScale(options: { quick?: boolean } = {}): Promise<Row[]> {
  const seconds = options.quick ? 2 : 5;
  const pg = await startPostgres();
  const api = await startCalcApi();
  const dir = await mkdtemp(join(tmpdir(), 'utcp-bench-bridge-'));
  const rows: Row[] = [];
  try {
    const repository = {
      tool_repository_type: 'postgres',
      connection_string: '${DATABASE_URL}',
      schema: 'bench_bridge',
    };
    const writer = await kit.UtcpClient.create({
      variables: { DATABASE_URL: pg.url },
      tool_repository: repository,
      manual_call_templates: [{ name: 'calc', call_template_type: 'http', url: `${api.base}/manual.json` }],
    } as never);
    await writer.close();
    const config = join(dir, 'utcp.json');
    await writeFile(config, JSON.stringify({ tool_repository: repository }));

    let single = 0;
    for (let n = 1; n <= 4; n++) {
      const bridges = await Promise.all(
        Array.from({ length: n }, () => startBridgeProcess(config, { UTCP_MCP_TOKEN: TOKEN, DATABASE_URL: pg.url })),
      );
      const proxy = await startRoundRobinProxy(bridges.map((b) => b.url));
      try {
        const call = await captureCall(proxy.url);
        await replay(proxy.url, call, 1000); // warm-up: JIT, connections, each bridge's first calls
        const bridgePids = bridges.map((b) => b.proc.pid!);
        const dbPids = postgresPids(pg.port);
        const before = { bridges: sum(bridgePids), db: sum(dbPids), self: process.cpuUsage() };
        const t0 = performance.now();
        const rate = await replay(proxy.url, call, seconds * 1000);
        const calls = (rate * (performance.now() - t0)) / 1000;
        const self = process.cpuUsage(before.self);
        // CPU milliseconds per call: the bridges; PostgreSQL; this process (load, proxy and the tool's HTTP server).
        const perCall = (cpuS: number) => ((cpuS * 1000) / calls).toFixed(2);
        const cpu = `CPU ms per call: bridges ${perCall(sum(bridgePids) - before.bridges)}, PostgreSQL ${perCall(sum(dbPids) - before.db)}, load+proxy+tool ${perCall((self.user + self.system) / 1e6)}`;
        if (n === 1) single = rate;
        rows.push({
          suite: 'bridge-scale',
          case: `tool calls through a proxy, ${n} bridge${n > 1 ? 's' : ''}`,
          subject: 'serve-mcp --stateless',
          unit: 'ops/s',
          value: rate,
          rounds: 1,
          ...(n > 1 ? { vs: '1 bridge', ratio: rate / single } : {}),
          note: `${CONCURRENCY} concurrent callers, ${seconds} s; requests per bridge ${proxy.counts.join('/')}; ${cpu}; load average ${loadavg()[0].toFixed(2)}`,
        });
      } finally {
        await proxy.close();
        await Promise.all(bridges.map((b) => b.stop()));
      }
    }
  } finally {
    await api.close();
    await pg.stop();
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}
