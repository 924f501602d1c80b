/**
 * Code mode vs direct tool calling on one multi-step task: look up 10 cities and answer with their total
 * population, through the agent loop and the scripted model (no provider: the figures are the loop's own cost).
 * Counted per run: model requests, tokens sent (characters of every request / 4), wall time.
 * Run alone: node --import tsx bench/code-mode.ts
 */
import { kit } from './kit.js';
import { stats, type Row } from './lib.js';

type AgentKit = typeof import('../src/agent/index.js');
type TestingKit = typeof import('../src/testing/index.js');
type CodeModeKit = typeof import('../src/code-mode/index.js');

const agent: AgentKit = await import(new URL('../dist/agent/index.js', import.meta.url).href);
const testing: TestingKit = await import(new URL('../dist/testing/index.js', import.meta.url).href);
const codeMode: CodeModeKit = await import(new URL('../dist/code-mode/index.js', import.meta.url).href);

const CITIES = ['Oslo', 'Lima', 'Paris', 'Quito', 'Accra', 'Hanoi', 'Perth', 'Turin', 'Dakar', 'Osaka'];
const OTHER_TOOLS = 29;

async function client(inlineDeclarations: number) {
  const c = await kit.UtcpClient.create({});
  const fns = [
    {
      name: 'lookup',
      description: 'Looks up a city: country, population and coordinates.',
      inputs: {
        type: 'object',
        properties: { city: { type: 'string', description: 'City name' } },
        required: ['city'],
      },
      handler: ({ city }: { city?: unknown }) => ({
        city,
        country: 'XX',
        population: String(city).length * 100_000,
        lat: 1.5,
        lon: 2.5,
        note: 'Figures from the synthetic gazetteer used by the benchmark.',
      }),
    },
    ...Array.from({ length: OTHER_TOOLS }, (_, i) => ({
      name: `other_${i}`,
      description: `Another geography operation number ${i}, with filters and pagination.`,
      inputs: {
        type: 'object',
        properties: { id: { type: 'string' }, limit: { type: 'integer' } },
        required: ['id'],
      },
      handler: () => ({}),
    })),
  ];
  await c.registerFunctions('geo', fns as never);
  await codeMode.registerCodeMode(c, { inlineDeclarations });
  return c;
}

type Mode = 'direct, one lookup per turn' | 'direct, 10 lookups in one turn' | 'code mode' | 'code mode, search first';

function turns(mode: Mode) {
  const { toolCallsTurn, textTurn } = testing;
  const answer = textTurn('The total population is 5,000,000.');
  if (mode === 'code mode' || mode === 'code mode, search first') {
    const code = `
const cities = ${JSON.stringify(CITIES)};
const rows = await Promise.all(cities.map((city) => geo.lookup({ city })));
return { total: rows.reduce((sum, r) => sum + r.population, 0), cities: rows.map((r) => r.city).join(', ') };`;
    const run = toolCallsTurn({ name: 'code_mode__run', args: { code } });
    if (mode === 'code mode') return [run, answer];
    return [toolCallsTurn({ name: 'search_tools', args: { query: 'city lookup population' } }), run, answer];
  }
  if (mode === 'direct, 10 lookups in one turn')
    return [toolCallsTurn(...CITIES.map((city, i) => ({ name: 'geo__lookup', args: { city }, id: `c${i}` }))), answer];
  return [...CITIES.map((city, i) => toolCallsTurn({ name: 'geo__lookup', args: { city }, id: `c${i}` })), answer];
}

async function once(mode: Mode): Promise<{ requests: number; tokens: number; ms: number }> {
  // Search first: the run tool carries no declarations (as for a catalog too large to inline).
  const c = await client(mode === 'code mode, search first' ? 0 : 40);
  try {
    const model = new testing.ScriptedModel(turns(mode));
    const started = performance.now();
    await agent.runAgent({
      client: c,
      model,
      messages: [agent.userMessage('What is the total population of these 10 cities? ' + CITIES.join(', '))],
      ...(mode === 'code mode'
        ? // The run tool's description carries the catalog's declarations: send it whole.
          { tools: ['code_mode.run'], maxToolDescriptionChars: 16_000 }
        : mode === 'code mode, search first'
          ? { codeModeTool: 'code_mode.run' }
          : { tools: ['geo.*'] }),
    });
    const ms = performance.now() - started;
    const chars = model.requests.reduce((sum, r) => sum + JSON.stringify(r).length, 0);
    return { requests: model.requests.length, tokens: Math.round(chars / 4), ms };
  } finally {
    await c.close();
  }
}

/**
 * The cost of one `runCode` (its worker thread, engine instance, script) and the host's event-loop lag while a
 * script spins (docs/design/code-mode.md#worker).
 */
async function perRun(rounds: number): Promise<Row[]> {
  const c = await kit.UtcpClient.create({});
  try {
    await c.registerFunctions('fn', [{ name: 'add', handler: ({ a, b }) => (a as number) + (b as number) }]);
    const rows: Row[] = [];
    const scripts: [string, string][] = [
      ['return 1', 'return 1'],
      ['10 tool calls in a row', 'let s = 0; for (let i = 0; i < 10; i++) s += await fn.add({ a: i, b: 1 }); return s'],
    ];
    for (const [subject, code] of scripts) {
      await codeMode.runCode(c, code); // warm-up
      const samples: number[] = [];
      for (let i = 0; i < rounds * 3; i++) {
        const started = performance.now();
        await codeMode.runCode(c, code);
        samples.push(performance.now() - started);
      }
      const st = stats(samples);
      rows.push({
        suite: 'code-mode',
        case: 'one runCode',
        subject,
        unit: 'ms',
        value: st.median,
        p90: st.p90,
        rounds: st.rounds,
      });
    }
    // The longest gap between 10 ms ticks of the host while a script spins for 1 s.
    let last = performance.now();
    let lag = 0;
    const tick = setInterval(() => {
      const now = performance.now();
      lag = Math.max(lag, now - last - 10);
      last = now;
    }, 10);
    await codeMode.runCode(c, 'while (true) {}', { timeoutMs: 1000 }).catch(() => undefined);
    lag = Math.max(lag, performance.now() - last - 10);
    clearInterval(tick);
    rows.push({
      suite: 'code-mode',
      case: 'host event-loop lag while a script spins 1 s',
      subject: 'while (true) {}',
      unit: 'ms',
      value: lag,
      rounds: 1,
    });
    return rows;
  } finally {
    await c.close();
  }
}

export async function benchCodeMode({ quick }: { quick: boolean }): Promise<Row[]> {
  const rounds = quick ? 3 : 10;
  const rows: Row[] = await perRun(rounds);
  const modes: Mode[] = [
    'direct, one lookup per turn',
    'direct, 10 lookups in one turn',
    'code mode',
    'code mode, search first',
  ];
  for (const mode of modes) {
    await once(mode); // warm-up: loads the engine, TypeScript and the validators once
    const samples: number[] = [];
    let last = { requests: 0, tokens: 0, ms: 0 };
    for (let i = 0; i < rounds; i++) {
      last = await once(mode);
      samples.push(last.ms);
    }
    const st = stats(samples);
    rows.push({
      suite: 'code-mode',
      case: '10 lookups, one answer (agent loop)',
      subject: mode,
      unit: 'ms',
      value: st.median,
      p90: st.p90,
      rounds: st.rounds,
      note: `${last.requests} model requests, ~${last.tokens} tokens sent`,
    });
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await benchCodeMode({ quick: process.argv.includes('--quick') }))
    process.stdout.write(
      `${`${r.case}: ${r.subject}`.padEnd(72)} ${r.value.toFixed(1).padStart(8)} ms  ${r.note ?? ''}\n`,
    );
}
