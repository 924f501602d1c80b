import { afterEach, describe, expect, it } from 'vitest';
import { openAIChatModel, runAgent, userMessage, type AgentEvent } from '../../src/agent/index.js';
import { MAX_TOOLS_PER_REQUEST } from '../../src/agent/loop/agent-tool-set.js';
import { UtcpClient, type DirectFunction } from '../../src/index.js';
import { ScriptedModel, textTurn, toolCallsTurn } from '../../src/testing/scripted-model.js';
import { openAIText, openAIToolCalls, startLlmServer, type LlmServer } from './helpers/llm-server.js';

const NOUNS = [
  'invoice',
  'customer',
  'order',
  'ticket',
  'repository',
  'issue',
  'playlist',
  'calendar',
  'sensor',
  'shipment',
];
const VERBS = ['list', 'get', 'create', 'update', 'delete', 'archive', 'export', 'count', 'search', 'tag'];

/** A catalog of `size` generic tools plus one distinctive currency converter. */
function catalog(size: number, converted: unknown[]): DirectFunction[] {
  const fns: DirectFunction[] = [];
  for (let i = 0; fns.length < size - 1; i++) {
    const verb = VERBS[i % VERBS.length];
    const noun = NOUNS[Math.floor(i / VERBS.length) % NOUNS.length];
    fns.push({
      name: `${verb}_${noun}_${i}`,
      description: `${verb} the ${noun} records of workspace ${i}`,
      handler: () => `${verb} ${noun} ${i}`,
    });
  }
  fns.push({
    name: 'convert_currency',
    description: 'Convert an amount of money from one currency to another at the current exchange rate',
    inputs: {
      type: 'object',
      properties: { amount: { type: 'number' }, from: { type: 'string' }, to: { type: 'string' } },
      required: ['amount', 'from', 'to'],
    },
    handler: (args) => (converted.push(args), { amount: 10.8, currency: args.to }),
  });
  return fns;
}

let server: LlmServer | undefined;
const clients: UtcpClient[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describe('runAgent over a large catalog (deferred loading)', () => {
  it('gives a 10,000-tool agent only search_tools first, then the tools it found', async () => {
    const client = await UtcpClient.create();
    clients.push(client);
    const converted: unknown[] = [];
    const registered = await client.registerFunctions('catalog', catalog(10_000, converted));
    expect(registered.manual.tools).toHaveLength(10_000);

    server = await startLlmServer([
      openAIToolCalls([
        { id: 'call_search', name: 'search_tools', arguments: '{"query":"convert currency exchange rate","limit":5}' },
      ]),
      openAIToolCalls([
        { id: 'call_convert', name: 'catalog__convert_currency', arguments: '{"amount":10,"from":"EUR","to":"USD"}' },
      ]),
      openAIText('10 EUR is 10.80 USD.'),
    ]);
    const events: AgentEvent[] = [];
    const model = openAIChatModel({ baseUrl: server.url, model: 'm' });
    const result = await runAgent({
      client,
      model,
      messages: [userMessage('How much is 10 EUR in USD?')],
      onEvent: (e) => events.push(e),
    });

    expect(result.text).toBe('10 EUR is 10.80 USD.');
    expect(converted).toEqual([{ amount: 10, from: 'EUR', to: 'USD' }]);
    const [first, second, third] = server.requests.map((r) => r.body);
    expect(first.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['search_tools']);
    expect(first.tools[0].function.description).toContain('catalog of 10000 tools');
    const secondNames: string[] = second.tools.map((t: { function: { name: string } }) => t.function.name);
    expect(secondNames[0]).toBe('search_tools');
    expect(secondNames).toContain('catalog__convert_currency');
    expect(secondNames.length).toBeLessThanOrEqual(6);
    const found = JSON.parse(second.messages.at(-1).content);
    expect(found.tools[0]).toEqual({
      name: 'catalog__convert_currency',
      description: expect.stringContaining('exchange rate'),
    });
    expect(second.messages.at(-1).tool_call_id).toBe('call_search');
    expect(third.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_convert',
      content: '{"amount":10.8,"currency":"USD"}',
    });
    for (const body of [first, second, third]) expect(body.tools.length).toBeLessThan(MAX_TOOLS_PER_REQUEST);
    expect(events.find((e) => e.type === 'tools_loaded')).toMatchObject({
      query: 'convert currency exchange rate',
      toolNames: expect.arrayContaining(['catalog.convert_currency']),
    });
  });

  it('sends every tool and no search_tools while the catalog fits', async () => {
    const client = await UtcpClient.create();
    clients.push(client);
    await client.registerFunctions('small', catalog(5, []));
    const model = new ScriptedModel([textTurn('ok')]);
    await runAgent({ client, model, messages: [userMessage('hi')], maxToolsInline: 5 });
    expect(model.requests[0].tools).toHaveLength(5);
    expect(model.requests[0].tools.map((t) => t.name)).not.toContain('search_tools');
  });

  it('keeps at most maxToolsInline found tools, dropping the oldest', async () => {
    const client = await UtcpClient.create();
    clients.push(client);
    await client.registerFunctions('c', catalog(50, []));
    const model = new ScriptedModel([
      toolCallsTurn({ name: 'search_tools', args: { query: 'invoice', limit: 3 } }),
      toolCallsTurn({ name: 'search_tools', args: { query: 'customer', limit: 3 } }),
      textTurn('ok'),
    ]);
    await runAgent({ client, model, messages: [userMessage('hi')], maxToolsInline: 4 });
    const counts = model.requests.map((r) => r.tools.length);
    expect(counts).toEqual([1, 4, 5]);
    const last = model.requests[2].tools.map((t) => t.name);
    expect(last.filter((n) => n.includes('customer'))).toHaveLength(3);
    expect(last.filter((n) => n.includes('invoice'))).toHaveLength(1);
  });

  it('searches only among the selected tools', async () => {
    const client = await UtcpClient.create();
    clients.push(client);
    await client.registerFunctions('c', catalog(60, []));
    await client.registerFunctions('other', [
      { name: 'convert_currency_fast', description: 'Convert currency quickly', handler: () => 1 },
    ]);
    const model = new ScriptedModel([
      toolCallsTurn({ name: 'search_tools', args: { query: 'convert currency' } }),
      textTurn('ok'),
    ]);
    await runAgent({ client, model, messages: [userMessage('hi')], tools: ['c.*'], maxToolsInline: 10 });
    const result = JSON.parse((model.requests[1].messages.at(-1) as { content: string }).content);
    expect(result.tools.map((t: { name: string }) => t.name)).toEqual(['c__convert_currency']);
  });

  it('tells the model to search when it guesses a tool it has not loaded, then serves the found tool under the same name', async () => {
    const client = await UtcpClient.create();
    clients.push(client);
    const converted: unknown[] = [];
    await client.registerFunctions('c', catalog(50, converted));
    const args = { amount: 1, from: 'EUR', to: 'JPY' };
    const model = new ScriptedModel([
      toolCallsTurn({ name: 'c__convert_currency', args, id: 'guess' }),
      toolCallsTurn({ name: 'search_tools', args: { query: 'convert currency', limit: 1 }, id: 's' }),
      toolCallsTurn({ name: 'c__convert_currency', args, id: 'call' }),
      textTurn('ok'),
    ]);
    await runAgent({ client, model, messages: [userMessage('hi')], maxToolsInline: 10 });
    expect(model.requests[1].messages.at(-1)).toMatchObject({
      toolCallId: 'guess',
      isError: true,
      content: expect.stringContaining('Call search_tools to find tools'),
    });
    expect(
      JSON.parse((model.requests[2].messages.at(-1) as { content: string }).content).tools.map(
        (t: { name: string }) => t.name,
      ),
    ).toEqual(['c__convert_currency']);
    expect(model.requests[2].tools.map((t) => t.name)).toEqual(['search_tools', 'c__convert_currency']);
    expect(model.requests[3].messages.at(-1)).toMatchObject({ toolCallId: 'call', isError: false });
    expect(converted).toEqual([args]);
    model.assertDone();
  });
});
