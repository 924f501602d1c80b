/**
 * Several `utcp serve-mcp --http --stateless` processes (the built CLI) behind a round-robin HTTP proxy, for the
 * scale-out test and benchmark (docs/design/transports.md#mcp-bridge-stateless). Everything listens on 127.0.0.1.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request as httpRequest, Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** A tool backend: GET /add?a=&b= answers {"sum": a+b}; /manual.json is a UTCP manual listing it. */
export async function startCalcApi(): Promise<{ base: string; calls: () => number; close(): Promise<void> }> {
  let calls = 0;
  let base = '';
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', base);
    res.setHeader('content-type', 'application/json');
    if (url.pathname === '/manual.json') {
      res.end(
        JSON.stringify({
          utcp_version: '1.0.0',
          manual_version: '1.0.0',
          tools: [
            {
              name: 'add',
              description: 'Adds two numbers',
              inputs: {
                type: 'object',
                properties: { a: { type: 'number' }, b: { type: 'number' } },
                required: ['a', 'b'],
              },
              tool_call_template: { call_template_type: 'http', url: `${base}/add`, http_method: 'GET' },
            },
          ],
        }),
      );
      return;
    }
    if (url.pathname === '/add') {
      calls++;
      res.end(JSON.stringify({ sum: Number(url.searchParams.get('a')) + Number(url.searchParams.get('b')) }));
      return;
    }
    res.statusCode = 404;
    res.end('{}');
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    calls: () => calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface BridgeProcess {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts `utcp serve-mcp --config <config> --http --stateless` with the given environment (UTCP_MCP_TOKEN,
 * DATABASE_URL...) and resolves with the URL it prints. Rejects with its stderr when it exits or takes over `timeoutMs`.
 */
export function startBridgeProcess(
  config: string,
  env: Record<string, string>,
  extraArgs: string[] = ['--stateless'],
  timeoutMs = 60_000,
): Promise<BridgeProcess> {
  const proc = spawn(process.execPath, [CLI, 'serve-mcp', '--config', config, '--http', ...extraArgs], {
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) resolve();
    else proc.once('exit', () => resolve());
  });
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`serve-mcp did not start within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    proc.stderr!.setEncoding('utf8');
    const onData = (chunk: string) => {
      stderr += chunk;
      const m = /over MCP at (http:\/\/\S+)/.exec(stderr);
      if (!m) return;
      clearTimeout(timer);
      proc.stderr!.off('data', onData);
      proc.stderr!.resume();
      resolve({ url: m[1], proc, stop });
    };
    proc.stderr!.on('data', onData);
    proc.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`serve-mcp exited (${code ?? signal}) before serving; stderr: ${stderr}`));
    });
  });
}

export interface RoundRobinProxy {
  url: string;
  /** Requests forwarded to each upstream, in upstream order. */
  counts: number[];
  /** The upstream index each request went to, in arrival order. */
  order: number[];
  close(): Promise<void>;
}

/**
 * A reverse proxy sending each request to the next upstream in turn (no affinity of any kind), keeping connections
 * to upstreams alive. `path` is the MCP endpoint path every upstream serves.
 */
export async function startRoundRobinProxy(upstreams: string[]): Promise<RoundRobinProxy> {
  const targets = upstreams.map((u) => new URL(u));
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const counts = targets.map(() => 0);
  const order: number[] = [];
  let next = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const index = next++ % targets.length;
    counts[index]++;
    order.push(index);
    const target = targets[index];
    const headers = { ...req.headers, host: target.host };
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers, agent },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${targets[0].pathname}`,
    counts,
    order,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}
