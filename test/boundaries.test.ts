/**
 * Layering rules (docs/design/README.md#module-boundaries): core imports nothing else in src/, loaders import only
 * core, transports never import a sibling, and no module reaches itself again through its imports (type-only and
 * lazy `import()` edges included).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(__dirname, '../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    out.push(relative(SRC, resolve(dirname(file), m[1])));
  }
  return out;
}

/**
 * Every group of modules that import one another in a ring (Tarjan's strongly connected components), each as
 * `a → b → … → a` along one ring of the group.
 */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const group = new Set<string>();
    for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) {
      onStack.delete(w);
      group.add(w);
    }
    if (group.size > 1 || graph.get(v)?.includes(v)) found.push(ring(graph, v, group));
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** One ring through `start` inside `group` (breadth-first, so the shortest), as `a → b → a`. */
function ring(graph: ReadonlyMap<string, readonly string[]>, start: string, group: ReadonlySet<string>): string {
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const v = queue.shift() as string;
    for (const w of graph.get(v) ?? []) {
      if (!group.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u = v; u !== start; u = from.get(u) as string) path.splice(1, 0, u);
        return [...path, start].join(' → ');
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [...group].join(' ↔ ');
}

describe('module boundaries', () => {
  it('core imports nothing outside core', () => {
    const bad = files(join(SRC, 'core')).flatMap((f) =>
      imports(f)
        .filter((i) => !i.startsWith('core/'))
        .map((i) => `${relative(SRC, f)} → ${i}`),
    );
    expect(bad).toEqual([]);
  });

  it('loaders import only core (and themselves)', () => {
    const bad = files(join(SRC, 'loaders')).flatMap((f) =>
      imports(f)
        .filter((i) => !i.startsWith('core/') && !i.startsWith('loaders/'))
        .map((i) => `${relative(SRC, f)} → ${i}`),
    );
    expect(bad).toEqual([]);
  });

  it('repository imports only core', () => {
    const bad = files(join(SRC, 'repository')).flatMap((f) =>
      imports(f)
        .filter((i) => !i.startsWith('core/') && !i.startsWith('repository/'))
        .map((i) => `${relative(SRC, f)} → ${i}`),
    );
    expect(bad).toEqual([]);
  });

  it('the stacks every transport shares import only core and the stacks below them (process → core; net → core; http → net, core)', () => {
    const below: Record<string, readonly string[]> = {
      process: ['core', 'process'],
      net: ['core', 'net'],
      http: ['core', 'net', 'http'],
    };
    const bad: string[] = [];
    for (const [dir, allowed] of Object.entries(below)) {
      for (const f of files(join(SRC, dir))) {
        for (const i of imports(f)) if (!allowed.includes(i.split('/')[0])) bad.push(`${relative(SRC, f)} → ${i}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('a transport never imports a sibling transport', () => {
    const bad: string[] = [];
    for (const f of files(join(SRC, 'transports'))) {
      const own = relative(SRC, f).split('/')[1];
      if (own.endsWith('.ts')) continue; // the registry (builtin.ts) lists every transport by design
      for (const i of imports(f)) {
        const parts = i.split('/');
        if (parts[0] === 'transports' && parts.length > 2 && parts[1] !== own && parts[1] !== 'shared')
          bad.push(`${relative(SRC, f)} → ${i}`);
        if (!['transports', 'core', 'http', 'net', 'process'].includes(parts[0]))
          bad.push(`${relative(SRC, f)} → ${i}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('agent, mcp, tools and code-mode use the public API only (the root entry, the internal entries for the agent and tools, and their own folder)', () => {
    const bad: string[] = [];
    for (const [dir, allowed] of [
      // core/guards.ts: the agent entry must not load internal.js (test/import-graph.test.ts); the guards are a leaf.
      ['agent', ['index.ts', 'internal.ts', 'internal-http.ts', 'core/guards.ts']],
      ['mcp', ['index.ts', 'internal.ts', 'internal-http.ts']],
      ['tools', ['index.ts', 'internal.ts', 'internal-http.ts']],
      ['code-mode', ['index.ts', 'core/guards.ts']],
    ] as const) {
      for (const f of files(join(SRC, dir))) {
        for (const i of imports(f)) {
          const target = i.replace(/\.js$/, '.ts');
          if (!target.startsWith(`${dir}/`) && !(allowed as readonly string[]).includes(target))
            bad.push(`${relative(SRC, f)} → ${i}`);
        }
      }
    }
    expect(bad).toEqual([]);
  });

  it('no import circle, type-only or lazy ones included (the shared types live where both sides can import them)', () => {
    const graph = new Map(
      files(SRC).map((f) => [relative(SRC, f), imports(f).map((i) => i.replace(/\.js$/, '.ts'))] as const),
    );
    expect(circles(graph)).toEqual([]);
  });

  it('the library never prints (only src/cli may)', () => {
    const noisy = files(SRC).filter(
      (f) =>
        !relative(SRC, f).startsWith('cli/') && /console\.(log|warn|error|info|debug)\(/.test(readFileSync(f, 'utf8')),
    );
    expect(noisy.map((f) => relative(SRC, f))).toEqual([]);
  });

  it('signals are linked only by the deadline helper (no AbortSignal.any outside src/core/deadline.ts)', () => {
    const linked = files(SRC).filter(
      (f) => relative(SRC, f) !== 'core/deadline.ts' && /AbortSignal\.any\(/.test(readFileSync(f, 'utf8')),
    );
    expect(linked.map((f) => relative(SRC, f))).toEqual([]);
  });

  // docs/design/http-exchange.md#deadlines: one deadline helper; everything else links to a signal through it.
  it("links to an AbortSignal only in the deadline helper (addEventListener('abort' nowhere else)", () => {
    const listening = files(SRC).filter(
      (f) =>
        relative(SRC, f) !== 'core/deadline.ts' && /addEventListener\(\s*['"]abort['"]/.test(readFileSync(f, 'utf8')),
    );
    expect(listening.map((f) => relative(SRC, f))).toEqual([]);
  });

  it('arms timers in the deadline helper, except the few timers that are no deadline of an operation', () => {
    // Each is a timer the deadline helper has no form for; anything else uses createDeadline/withTimeout,
    // sleep, settledWithin or idleTimer from core/deadline.ts.
    const allowed: Record<string, string> = {
      'core/deadline.ts': 'the helper itself',
      'process/process-group.ts': 'SIGTERM to SIGKILL escalation, polling the tree; it lives as long as the tree',
      'process/pid-namespace.ts': 'kills a probe child that hangs (the probe has no caller signal)',
      'repository/postgres/driver.ts': 'reconnect backoff of the change listener',
      'transports/graphql/subscribe-graphql.ts': 'terminates a socket that does not finish its close handshake (unref)',
      'transports/udp/exchange-datagrams.ts': 'the short wait for one more datagram (unref) after the first reply',
      'cli/output.ts': 'delays the "calling…" progress line (unref)',
      'tools/sandbox.ts': 'kills a sandbox probe child that hangs',
      'mcp/http-bridge.ts': 'closes an idle MCP session (unref), per session, across requests',
      'repository/bm25-search.ts': 'runs the next step of an unfinished search-index build (unref, 0 ms): no deadline',
    };
    const timers = files(SRC)
      .filter((f) => /\bsetTimeout\(/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(SRC, f))
      .filter((f) => !(f in allowed));
    expect(timers).toEqual([]);
  });

  it('keeps every source file at 600 lines or fewer', () => {
    const long = files(SRC)
      .map((f) => ({ file: relative(SRC, f), lines: readFileSync(f, 'utf8').split('\n').length }))
      .filter((f) => f.lines > 600);
    expect(long).toEqual([]);
  });
});
