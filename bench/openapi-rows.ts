/**
 * Adapts the OpenAPI conversion benchmark (bench/openapi.ts) to the harness's rows and targets, and times the GitHub
 * spec registered through each client in a fresh process (bench/cold-register.mjs), served from a local HTTP server.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { benchOpenApi } from './openapi.js';
import { stats, type Row } from './lib.js';

/** One bench/cold-register.mjs run: `subject` registers `url` through its client's http template. */
function coldRun(subject: 'kit-url' | 'sdk-url', url: string): Promise<Record<string, number>> {
  const script = fileURLToPath(new URL('./cold-register.mjs', import.meta.url));
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [script, subject, url], { maxBuffer: 1 << 20, timeout: 300_000 }, (error, out, err) => {
      if (error) reject(new Error(`${subject} cold run failed: ${err || error.message}`));
      else resolve(JSON.parse(out.trim().split('\n').pop()!));
    });
  });
}

/** The GitHub spec registered cold through utcp-kit's client and the official SDK's, side by side. */
async function coldRegistration(file: string, operations: number, rounds: number): Promise<Row[]> {
  const body = readFileSync(file);
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api.github.com.json`;
  try {
    const kitRuns: Record<string, number>[] = [];
    for (let i = 0; i < rounds; i++) kitRuns.push(await coldRun('kit-url', url));
    // The official client converts for about 15 s per run: one round.
    const sdk = await coldRun('sdk-url', url);
    const ours = stats(kitRuns.map((r) => r.register));
    const caseName = `GitHub spec (${operations} ops) registered cold through the client`;
    return [
      {
        suite: 'openapi',
        case: caseName,
        subject: 'utcp-kit',
        unit: 'ms',
        value: ours.median,
        p90: ours.p90,
        rounds: ours.rounds,
        vs: '@utcp/sdk',
        ratio: sdk.register / ours.median,
        target: '< 400 ms (quiet machine)',
        met: ours.median < 400,
        note: `fresh process, registerManual({ call_template_type: 'http', url }) from a local server: download, parse, conversion, validation and the search index of ${kitRuns[0].tools} tools; module loading excluded`,
      },
      {
        suite: 'openapi',
        case: caseName,
        subject: '@utcp/sdk',
        unit: 'ms',
        value: sdk.register,
        rounds: 1,
        note: `${sdk.tools} tools; console output silenced`,
      },
    ];
  } finally {
    await new Promise((r) => server.close(r));
  }
}

export async function benchOpenApiRows(options: { quick?: boolean } = {}): Promise<Row[]> {
  const result = await benchOpenApi({ rounds: options.quick ? 3 : 7, officialRounds: options.quick ? 1 : 2 });
  const caseName = `convert GitHub REST spec (${result.spec.operations} operations, ${(result.spec.bytes / 2 ** 20).toFixed(0)} MB)`;
  const rows: Row[] = result.rows.map((r) => ({
    suite: 'openapi',
    case: r.what.includes('text') ? `${caseName}, from JSON text` : caseName,
    subject: r.subject,
    unit: 'ms',
    value: r.stats.median,
    p90: r.stats.p90,
    rounds: r.stats.rounds,
    note: `${r.tools} tools${r.failed ? `, ${r.failed} failed` : ''}`,
  }));
  const ours = rows.find((r) => r.subject === 'utcp-kit' && r.case === caseName)!;
  Object.assign(ours, { target: '< 500 ms median', met: ours.value < 500 });
  const official = rows.find((r) => r.subject.startsWith('@utcp/http'));
  const samchon = rows.find((r) => r.subject.startsWith('@samchon'));
  // One ratio per peer: the official converter on the main row, samchon on the text row's twin.
  if (official) Object.assign(ours, { vs: official.subject, ratio: official.value / ours.value });
  if (samchon) {
    rows.push({
      ...ours,
      case: `${caseName} vs samchon`,
      vs: samchon.subject,
      ratio: samchon.value / ours.value,
      target: undefined,
      met: undefined,
      note: 'same measurement as the row above, compared with @samchon/openapi',
    });
  }
  rows.push(...(await coldRegistration(result.spec.file, result.spec.operations, options.quick ? 3 : 5)));
  return rows;
}
