/**
 * `utcp tools`, `utcp call` and `utcp inspect` never search, so they register without building the search index
 * (docs/design/manual-format.md#search-index); `utcp search` builds it. Observed through the index cache of the
 * config: a large registration's index is written there when, and only when, it is built. Runs the built CLI.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli } from '../helpers/run-cli.js';

const run = (args: string[], cwd: string) => runCli(args, cwd, 30_000);

/** A folder with a 1,200-tool manual (large enough for the index cache) and a config naming an index cache. */
function workspace(strategy: Record<string, unknown> = {}): { dir: string; indexed: () => number } {
  const dir = mkdtempSync(join(tmpdir(), 'utcp-cli-index-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const tools = Array.from({ length: 1200 }, (_, i) => ({
    name: `t${i}`,
    description: i === 7 ? 'Weather forecast for a city' : `Tool number ${i} of the big manual`,
    tool_call_template: { call_template_type: 'text', content: `answer ${i}` },
  }));
  writeFileSync(join(dir, 'manual.json'), JSON.stringify({ utcp_version: '1.0.1', manual_version: '1.0.0', tools }));
  writeFileSync(
    join(dir, 'utcp.config.json'),
    JSON.stringify({
      tool_search_strategy: { tool_search_strategy_type: 'bm25', index_cache_dir: 'idx', ...strategy },
      manual_call_templates: [
        {
          name: 'big',
          call_template_type: 'file',
          file_path: 'manual.json',
          allowed_communication_protocols: ['text'],
        },
      ],
    }),
  );
  const idx = join(dir, 'idx');
  return { dir, indexed: () => (existsSync(idx) ? readdirSync(idx).filter((f) => f.endsWith('.idx')).length : 0) };
}

describe('utcp commands that do not search build no index', () => {
  it('tools, call and inspect leave the index unbuilt; search builds it', async () => {
    const { dir, indexed } = workspace();
    const tools = await run(['tools', '--json'], dir);
    expect(tools.code, tools.stderr).toBe(0);
    expect(JSON.parse(tools.stdout)).toHaveLength(1200);
    const call = await run(['call', 'big.t5'], dir);
    expect(call.code, call.stderr).toBe(0);
    expect(call.stdout.trim()).toBe('answer 5');
    const inspect = await run(['inspect', '--json'], dir);
    expect(inspect.code, inspect.stderr).toBe(0);
    expect(indexed()).toBe(0);

    const search = await run(['search', 'weather forecast', '--json'], dir);
    expect(search.code, search.stderr).toBe(0);
    expect(JSON.parse(search.stdout)[0].name).toBe('big.t7');
    expect(indexed()).toBe(1);
  }, 60_000);

  it('a config that sets index_on_first_search: false keeps indexing at registration', async () => {
    const { dir, indexed } = workspace({ index_on_first_search: false });
    const tools = await run(['tools', '--json'], dir);
    expect(tools.code, tools.stderr).toBe(0);
    expect(indexed()).toBe(1);
  }, 60_000);
});
