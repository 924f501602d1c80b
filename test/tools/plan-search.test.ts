/**
 * The plan tools and web_search (docs/design/code-tools.md#plans, #web-search): plans written only under the plans
 * directory, update_plan's result announced as an agent `plan` event (a scripted OpenAI-format model on 127.0.0.1),
 * and web_search against a local fake SearXNG endpoint.
 */
import { readFile, symlink } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openAIChatModel, runAgent, userMessage, type AgentEvent } from '../../src/agent/index.js';
import { UtcpClient } from '../../src/index.js';
import { registerCodeTools } from '../../src/tools/index.js';
import { openAIText, openAIToolCalls, startLlmServer } from '../agent/helpers/llm-server.js';
import { codeWorkspace, tempDir } from './helpers.js';

const PLAN_TOOLS = ['save_plan', 'save_plan_append', 'update_plan', 'read'] as const;

describe('plan tools', () => {
  it('write markdown plans only under the plans directory, never overwriting', async () => {
    const { root, call, fail } = await codeWorkspace({}, { tools: [...PLAN_TOOLS] });
    expect(await call('save_plan', { name: 'refactor', content: '# Refactor\n\n1. Split client.ts\n' })).toMatch(
      /Saved the plan \.plans\/refactor\.md/,
    );
    expect(await fail('save_plan', { name: 'refactor', content: 'again' })).toMatch(/already exists|exist/);
    await call('save_plan_append', { name: 'refactor', content: '2. Move helpers\n' });
    expect(await readFile(join(root, '.plans', 'refactor.md'), 'utf8')).toBe(
      '# Refactor\n\n1. Split client.ts\n2. Move helpers\n',
    );
    for (const name of ['../escape', 'a/b', '.hidden', '..', 'x'.repeat(65), '']) {
      expect(await fail('save_plan', { name, content: 'x' })).toMatch(
        /name must be a plain file name|must NOT have fewer|plain/,
      );
    }
  });

  it('refuse a plans directory that is a link out of the workspace', async () => {
    const outside = await tempDir('plans-outside-');
    const { root, fail } = await codeWorkspace({}, { tools: [...PLAN_TOOLS] });
    await symlink(outside, join(root, '.plans'));
    expect(await fail('save_plan', { name: 'p', content: 'x' })).toMatch(/outside|link|not allowed|escap/i);
  });

  it('update_plan returns the steps, checks them, and the agent loop announces them as a plan event', async () => {
    const root = await tempDir('plan-agent-');
    const client = await UtcpClient.create({});
    onTestFinished(() => client.close());
    await registerCodeTools(client, { root, tools: ['update_plan'] });
    const steps = [
      { step: 'Read the failing test', status: 'completed' },
      { step: 'Fix the parser', status: 'in_progress' },
      { step: 'Run the suite', status: 'pending' },
    ];
    await expect(
      client.callTool('code.update_plan', {
        steps: [
          { step: 'a', status: 'in_progress' },
          { step: 'b', status: 'in_progress' },
        ],
      }),
    ).rejects.toThrow(/at most one step may be in_progress/);
    const server = await startLlmServer([
      openAIToolCalls([{ id: 'call_plan', name: 'code__update_plan', arguments: JSON.stringify({ steps }) }]),
      openAIText('Working on it.'),
    ]);
    onTestFinished(() => server.close());
    const events: AgentEvent[] = [];
    const model = openAIChatModel({ baseUrl: `${server.url}/v1`, apiKey: 'sk-test', model: 'test-model' });
    onTestFinished(() => model.close?.());
    const result = await runAgent({
      client,
      model,
      messages: [userMessage('Fix the parser')],
      onEvent: (e) => events.push(e),
    });
    expect(result.text).toBe('Working on it.');
    expect(events.filter((e) => e.type === 'plan')).toEqual([
      { type: 'plan', step: 1, toolCallId: 'call_plan', toolName: 'code.update_plan', steps },
    ]);
  });
});

describe('web_search', () => {
  async function searxng() {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.url ?? '');
      const q = new URL(req.url ?? '/', 'http://x').searchParams.get('q') ?? '';
      const results = Array.from({ length: 40 }, (_, i) => ({
        title: `Result ${i + 1} for ${q}`,
        url: `https://example.org/${i + 1}`,
        content: `Snippet\n  number ${i + 1}`,
      }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ query: q, results }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/searx`, seen };
  }

  it('queries <url>/search?q=…&format=json and returns numbered results: 10 by default, at most 25', async () => {
    const fake = await searxng();
    const { call, tools } = await codeWorkspace({}, { tools: ['web_search'], webSearch: { url: fake.url } });
    expect(tools.toolNames).toEqual(['code.web_search']);
    const text = await call('web_search', { query: 'utcp manual' });
    expect(fake.seen[0]).toBe('/searx/search?q=utcp+manual&format=json');
    expect(text.split('\n').filter((l) => /^\d+\. /.test(l))).toHaveLength(10);
    expect(text).toContain('1. Result 1 for utcp manual\n   https://example.org/1\n   Snippet number 1');
    const many = await call('web_search', { query: 'x', max_results: 25 });
    expect(many.split('\n').filter((l) => /^\d+\. /.test(l))).toHaveLength(25);
  });

  it('is registered only when configured, and the URL policy applies', async () => {
    const { tools } = await codeWorkspace({}, { tools: undefined, sandbox: 'none' });
    expect(tools.toolNames).not.toContain('code.web_search');
    await expect(codeWorkspace({}, { tools: ['web_search'] })).rejects.toThrow(/web_search needs webSearch/);
    const { fail } = await codeWorkspace(
      {},
      { tools: ['web_search'], webSearch: { url: 'http://search.example.com' } },
    );
    expect(await fail('web_search', { query: 'x' })).toMatch(/HTTPS or be a literal loopback address/);
  });
});
