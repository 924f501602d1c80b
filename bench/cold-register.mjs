// One cold registration in a fresh process (spawned by bench/search.ts): plain JavaScript, no loader hooks,
// so module loading is what a user's process sees. Prints {"register": ms, "firstSearch": ms} on stdout.
// argv: <kit|kit-whole|sdk|parse> <manual URL or path of a file holding the manual text> [kit: index_cache_dir or idle:<ms>]
//       (kit-whole: the whole search index built during registration, no index budget)
//       <kit-url|sdk-url> <URL of a manual or an OpenAPI spec>: registered through the client's http template
import { readFileSync } from 'node:fs';

const [subject, source, cacheArg] = process.argv.slice(2);
// kit: the third argument is an index cache folder, or `idle:<ms>`, a pause between registration and first search.
const idleMs = cacheArg?.startsWith('idle:') ? Number(cacheArg.slice(5)) : 0;
const cacheDir = idleMs > 0 ? undefined : cacheArg;
const out = {};
if (subject === 'kit' || subject === 'kit-whole') {
  const content = readFileSync(source, 'utf8');
  const t0 = performance.now();
  const { UtcpClient } = await import(new URL('../dist/index.js', import.meta.url).href);
  const client = await UtcpClient.create(
    cacheDir
      ? { tool_search_strategy: { tool_search_strategy_type: 'bm25', index_cache_dir: cacheDir } }
      : subject === 'kit-whole'
        ? { tool_search_strategy: { tool_search_strategy_type: 'bm25', index_budget_ms: 1e9 } }
        : {},
  );
  const t1 = performance.now();
  const r = await client.registerManual({
    name: 'bench',
    call_template_type: 'text',
    content,
    allowed_communication_protocols: ['http'],
  });
  const t2 = performance.now();
  if (!r.success) throw new Error(r.errors.join());
  // idleMs: the process waits that long first (an agent awaiting its model's reply), and the index's idle steps run.
  if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
  const t3 = performance.now();
  await client.searchTools('weather forecast', 10);
  out.import = t1 - t0;
  out.register = t2 - t1;
  out.firstSearch = performance.now() - t3;
  await client.close();
} else if (subject === 'kit-url') {
  const t0 = performance.now();
  const { UtcpClient } = await import(new URL('../dist/index.js', import.meta.url).href);
  const client = await UtcpClient.create();
  const t1 = performance.now();
  const r = await client.registerManual({ name: 'bench', call_template_type: 'http', url: source });
  const t2 = performance.now();
  if (!r.success) throw new Error(r.errors.join());
  out.import = t1 - t0;
  out.register = t2 - t1;
  out.tools = r.manual.tools.length;
  await client.close();
} else if (subject === 'parse') {
  // The floor of any client that reads the manual as JSON text: JSON.parse alone, in a fresh process.
  const content = readFileSync(source, 'utf8');
  const t0 = performance.now();
  globalThis.parsed = JSON.parse(content);
  out.parse = performance.now() - t0;
} else if (subject === 'sdk' || subject === 'sdk-url') {
  const t0 = performance.now();
  const sdk = await import('@utcp/sdk');
  await import('@utcp/http');
  const client = await sdk.UtcpClient.create(process.cwd(), {});
  const t1 = performance.now();
  const log = console.log;
  console.log = () => {};
  const r = await client.registerManual({ name: 'bench', call_template_type: 'http', url: source, http_method: 'GET' });
  console.log = log;
  const t2 = performance.now();
  if (!r.success) throw new Error(r.errors.join());
  out.tools = r.manual.tools.length;
  out.import = t1 - t0;
  out.register = t2 - t1;
} else throw new Error(`unknown subject ${subject}`);
process.stdout.write(`${JSON.stringify(out)}\n`);
