/**
 * `npm start`: a tour of utcp-kit with no network and no keys. It starts a small local API,
 * then loads tools from a UTCP manual, an OpenAPI spec, a command-line tool and in-process functions,
 * searches them and calls them.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { UtcpClient, type RegisterManualResult } from '../../src/index.js';

const tty = process.stdout.isTTY;
const bold = (s: string) => (tty ? `\x1b[1m${s}\x1b[0m` : s);
const dim = (s: string) => (tty ? `\x1b[2m${s}\x1b[0m` : s);
const green = (s: string) => (tty ? `\x1b[32m${s}\x1b[0m` : s);
const red = (s: string) => (tty ? `\x1b[31m${s}\x1b[0m` : s);

const CITIES: Record<string, { temp_c: number; sky: string }> = {
  paris: { temp_c: 14, sky: 'light rain' },
  tokyo: { temp_c: 21, sky: 'clear' },
  lima: { temp_c: 19, sky: 'overcast' },
};
const PETS = [
  { id: 1, name: 'Rex', species: 'dog' },
  { id: 2, name: 'Tom', species: 'cat' },
];

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function startApi() {
  let base = '';
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', base);
    if (url.pathname === '/utcp') {
      return json(res, 200, {
        utcp_version: '1.0.1',
        manual_version: '1.0.0',
        tools: [
          {
            name: 'current_weather',
            description: 'Current weather conditions for a city',
            tags: ['weather'],
            inputs: {
              type: 'object',
              properties: { city: { type: 'string', description: 'City name' } },
              required: ['city'],
            },
            tool_call_template: { call_template_type: 'http', url: `${base}/weather/{city}`, http_method: 'GET' },
          },
        ],
      });
    }
    const weather = /^\/weather\/([^/]+)$/.exec(url.pathname);
    if (weather) {
      const city = decodeURIComponent(weather[1]).toLowerCase();
      return CITIES[city]
        ? json(res, 200, { city, ...CITIES[city] })
        : json(res, 404, { error: `unknown city ${city}` });
    }
    if (url.pathname === '/openapi.json') {
      return json(res, 200, {
        openapi: '3.0.3',
        info: { title: 'Pet store', version: '1.0.0' },
        servers: [{ url: '/api' }],
        paths: {
          '/pets': {
            get: {
              operationId: 'listPets',
              summary: 'List all pets in the store',
              tags: ['pets'],
              responses: { 200: { description: 'ok' } },
            },
          },
          '/pets/{petId}': {
            get: {
              operationId: 'getPet',
              summary: 'Find a pet by its id',
              tags: ['pets'],
              parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'integer' } }],
              responses: { 200: { description: 'ok' } },
            },
          },
        },
      });
    }
    if (url.pathname === '/api/pets') return json(res, 200, PETS);
    const pet = /^\/api\/pets\/(\d+)$/.exec(url.pathname);
    if (pet) {
      const found = PETS.find((p) => p.id === Number(pet[1]));
      return found ? json(res, 200, found) : json(res, 404, { error: 'no such pet' });
    }
    json(res, 404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

function report(label: string, r: RegisterManualResult) {
  if (r.success)
    console.log(
      `  ${green('✓')} ${label.padEnd(34)} ${r.manual.tools.length} tool(s)${r.warnings.length ? dim(`  (${r.warnings.length} warning(s))`) : ''}`,
    );
  else console.log(`  ${red('✗')} ${label.padEnd(34)} ${r.errors.join('; ')}`);
}

async function show(label: string, run: () => Promise<unknown>) {
  try {
    const value = await run();
    console.log(`  ${bold(label)}\n    ${dim('→')} ${JSON.stringify(value)}`);
  } catch (error) {
    // HttpStatusError messages already carry the server's explanation ("HTTP 404 ... from <url>: unknown city").
    console.log(`  ${bold(label)}\n    ${red('×')} ${(error as Error).message}`);
  }
}

const api = await startApi();
const client = await UtcpClient.create();
try {
  console.log(bold('\n1. Load tools from five kinds of source'));
  report(
    'UTCP manual over HTTP',
    await client.registerManual({ name: 'weather', call_template_type: 'http', url: `${api.base}/utcp` }),
  );
  report(
    'OpenAPI 3 spec over HTTP',
    await client.registerManual({ name: 'petstore', call_template_type: 'http', url: `${api.base}/openapi.json` }),
  );
  report(
    'command-line tool',
    await client.registerManual({
      name: 'shell',
      call_template_type: 'text',
      allowed_communication_protocols: ['cli'],
      content: JSON.stringify({
        tools: [
          {
            name: 'word_count',
            description: 'Count the words in a piece of text',
            tags: ['text'],
            inputs: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
            tool_call_template: {
              call_template_type: 'cli',
              commands: [{ command: `printf '%s' UTCP_ARG_text_UTCP_END | wc -w` }],
            },
          },
        ],
      }),
    }),
  );
  // A real MCP server from npm, started over stdio (its own process; closed by client.close()).
  const everything = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
  report(
    'MCP server (stdio)',
    await client.registerManual({
      name: 'mcp',
      call_template_type: 'mcp',
      config: { mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'] } } },
    }),
  );
  report(
    'in-process functions',
    await client.registerFunctions('local', [
      {
        name: 'convert_temperature',
        description: 'Convert a temperature from Celsius to Fahrenheit',
        tags: ['units'],
        inputs: { type: 'object', properties: { celsius: { type: 'number' } }, required: ['celsius'] },
        handler: ({ celsius }) => ({ fahrenheit: Math.round(((celsius as number) * 9) / 5 + 32) }),
      },
    ]),
  );

  console.log(bold('\n2. Search them'));
  for (const query of [
    'what is the weather like in Paris',
    'find a pet by id',
    'how many words',
    'add two numbers',
    'fahrenheit',
  ]) {
    const hits = await client.searchTools(query, 3);
    console.log(`  ${query.padEnd(36)} ${dim('→')} ${hits.map((t) => t.name).join(', ') || dim('(nothing)')}`);
  }

  console.log(bold('\n3. Call them'));
  await show('weather.current_weather {city: "Paris"}', () =>
    client.callTool('weather.current_weather', { city: 'Paris' }),
  );
  await show('petstore.getPet {petId: 2}', () => client.callTool('petstore.getPet', { petId: 2 }));
  await show('shell.word_count {text: "one two three; rm -rf /"}', () =>
    client.callTool('shell.word_count', { text: 'one two three; rm -rf /' }),
  );
  await show('mcp.everything.get-sum {a: 2, b: 40}', () => client.callTool('mcp.everything.get-sum', { a: 2, b: 40 }));
  await show('local.convert_temperature {celsius: 14}', () =>
    client.callTool('local.convert_temperature', { celsius: 14 }),
  );

  console.log(bold('\n4. Errors are typed and say what went wrong'));
  await show('weather.current_weather {}', () => client.callTool('weather.current_weather', {}));
  await show('weather.current_weather {city: "Atlantis"}', () =>
    client.callTool('weather.current_weather', { city: 'Atlantis' }),
  );
  await show('nope.tool', () => client.callTool('nope.tool', {}));
  console.log(dim('\nNext: npm test · npm run example -- <name> · see README.md\n'));
} finally {
  await client.close();
  await api.close();
}
