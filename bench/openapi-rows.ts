/** Adapts the OpenAPI conversion benchmark (bench/openapi.ts) to the harness's rows and targets. */
import { benchOpenApi } from './openapi.js';
import type { Row } from './lib.js';

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
  return rows;
}
