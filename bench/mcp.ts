/**
 * A tool call on @modelcontextprotocol/server-everything over stdio: utcp-kit vs the raw
 * @modelcontextprotocol/sdk client, interleaved, each with its own server process.
 */
import { createRequire } from 'node:module';
import { kit } from './kit.js';

const { UtcpClient } = kit;
import { stats, type Row } from './lib.js';

const require = createRequire(import.meta.url);

export async function benchMcp(options: { quick?: boolean } = {}): Promise<Row[]> {
  const rounds = options.quick ? 200 : 1000;
  const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const args = [entry, 'stdio'];

  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const raw = new Client({ name: 'bench', version: '1.0.0' });
  await raw.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }));

  const client = await UtcpClient.create();
  const reg = await client.registerManual({
    name: 'bench',
    call_template_type: 'mcp',
    config: { mcpServers: { everything: { command: process.execPath, args } } },
  });
  if (!reg.success) throw new Error(reg.errors.join());

  const subjects: Record<string, () => Promise<unknown>> = {
    '@modelcontextprotocol/sdk': () => raw.callTool({ name: 'echo', arguments: { message: 'hello' } }),
    'utcp-kit': () => client.callTool('bench.everything.echo', { message: 'hello' }),
  };
  const samples: Record<string, number[]> = { '@modelcontextprotocol/sdk': [], 'utcp-kit': [] };
  for (const call of Object.values(subjects)) for (let i = 0; i < 50; i++) await call();
  const block = 25;
  for (let done = 0; done < rounds; done += block) {
    for (const [name, call] of Object.entries(subjects)) {
      for (let i = 0; i < block; i++) {
        const t0 = performance.now();
        await call();
        samples[name].push(performance.now() - t0);
      }
    }
  }
  await raw.close();
  await client.close();
  const rows: Row[] = Object.entries(samples).map(([subject, s]) => {
    const st = stats(s);
    return {
      suite: 'mcp',
      case: 'MCP tool call (stdio)',
      subject,
      unit: 'ms' as const,
      value: st.median,
      p90: st.p90,
      rounds: st.rounds,
    };
  });
  const ours = rows.find((r) => r.subject === 'utcp-kit')!;
  const peer = rows.find((r) => r.subject !== 'utcp-kit')!;
  const overhead = ours.value / peer.value;
  Object.assign(ours, {
    vs: peer.subject,
    ratio: 1 / overhead,
    target: 'within 5% of the raw SDK client',
    met: overhead <= 1.05,
    note: `${((overhead - 1) * 100).toFixed(1)}% over the raw SDK client (${((ours.value - peer.value) * 1000).toFixed(0)} µs). utcp-kit calls through the MCP client SDK v2 (@modelcontextprotocol/client) on its own stdio transport, validates the arguments, and asks the server for progress on every call (a progress token, so long calls stay alive past the per-request timeout): measured on CPU time, that request for progress is about 60 µs per call, the rest (argument validation, session lookup, result mapping) about 50 µs`,
  });
  return rows;
}
