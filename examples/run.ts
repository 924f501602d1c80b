/** `npm run example -- <name> [args...]` runs examples/<name>/main.ts. */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const [name, ...rest] = process.argv.slice(2);
const available = readdirSync(here, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(here, d.name, 'main.ts')))
  .map((d) => d.name);
if (!name || !available.includes(name)) {
  console.error(`usage: npm run example -- <name> [args...]\navailable: ${available.join(', ')}`);
  process.exit(name ? 1 : 0);
}
process.argv = [process.argv[0], join(here, name, 'main.ts'), ...rest];
await import(pathToFileURL(join(here, name, 'main.ts')).href);
