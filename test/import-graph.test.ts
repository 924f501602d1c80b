/**
 * `import 'utcp-kit'` stays light: the root entry's static import graph (in the built package) reaches no heavy
 * dependency. Protocol libraries, TypeBox and Ajv are imported on first use (docs/design/adding-a-transport.md#lazy-loading).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const DIST = resolve(__dirname, '../dist');
const HEAVY = [
  '@sinclair/typebox',
  'ajv',
  'yaml',
  'undici',
  'ws',
  'graphql',
  '@grpc/grpc-js',
  'protobufjs',
  '@modelcontextprotocol/sdk',
  '@modelcontextprotocol/server',
  'eventsource-parser',
  'pg',
  '@electric-sql/pglite',
  're2js',
  '@opentelemetry/api',
  'quickjs-emscripten-core',
  '@jitl/quickjs-wasmfile-release-sync',
  'typescript',
];

/** Every module reachable from `entry` through static `import ... from` (not `import()`). */
function staticGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^\s*(?:import|export)\s+(?!type\b)[^'";]*?from\s+['"]([^'"]+)['"]/gm)) {
      const spec = m[1];
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
      else if (!spec.startsWith('node:'))
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
    }
    for (const m of text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm))
      if (m[1].startsWith('.')) visit(resolve(dirname(file), m[1]));
  };
  visit(entry);
  return { files, packages };
}

describe('import cost of the root entry', () => {
  it.runIf(existsSync(resolve(DIST, 'index.js')))(
    'statically imports no heavy dependency and no transport or template module',
    () => {
      const { files, packages } = staticGraph(resolve(DIST, 'index.js'));
      expect([...packages].filter((p) => HEAVY.includes(p))).toEqual([]);
      const loaded = [...files].map((f) => f.slice(DIST.length + 1));
      // Error classes are public and tiny; everything else of a transport waits for first use.
      expect(
        loaded.filter(
          (f) =>
            (/^transports\/(?!builtin\.js)/.test(f) && !f.endsWith('-error.js')) || f === 'core/template-schema.js',
        ),
      ).toEqual([]);
    },
  );
});

describe('import cost of the agent entry', () => {
  it.runIf(existsSync(resolve(DIST, 'agent/index.js')))(
    'statically imports neither undici nor the HTTP exchange (both load with the first model request)',
    () => {
      const { files, packages } = staticGraph(resolve(DIST, 'agent/index.js'));
      expect([...packages].filter((p) => HEAVY.includes(p) && p !== 'eventsource-parser')).toEqual([]);
      const loaded = [...files].map((f) => f.slice(DIST.length + 1));
      expect(
        loaded.filter((f) => f === 'internal.js' || f.startsWith('transports/shared/') || f.startsWith('http/')),
      ).toEqual([]);
    },
  );
});

describe('import cost of the CLI, the MCP bridge and the internal entry', () => {
  for (const entry of ['cli/main.js', 'mcp/index.js', 'internal.js']) {
    it.runIf(existsSync(resolve(DIST, entry)))(
      `${entry} statically imports no heavy dependency (undici loads with the first download: utcp-kit/internal/http)`,
      () => {
        const { files, packages } = staticGraph(resolve(DIST, entry));
        expect([...packages].filter((p) => HEAVY.includes(p))).toEqual([]);
        const loaded = [...files].map((f) => f.slice(DIST.length + 1));
        expect(loaded.filter((f) => f === 'internal-http.js' || f === 'http/http-exchange.js')).toEqual([]);
      },
    );
  }
});

describe('import cost of code mode', () => {
  it.runIf(existsSync(resolve(DIST, 'code-mode/index.js')))(
    'neither the root nor the agent entry reaches code mode; code mode loads its engine and typescript on first run',
    () => {
      for (const entry of ['index.js', 'agent/index.js', 'mcp/index.js', 'cli/main.js']) {
        const { files } = staticGraph(resolve(DIST, entry));
        expect(
          [...files].filter((f) => f.includes('/code-mode/')),
          entry,
        ).toEqual([]);
      }
      const { packages } = staticGraph(resolve(DIST, 'code-mode/index.js'));
      expect([...packages].filter((p) => HEAVY.includes(p))).toEqual([]);
    },
  );
});
