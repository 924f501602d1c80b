import { afterEach, describe, expect, it } from 'vitest';
import { resumeAgent, runAgent, userMessage, type AgentEvent, type ApprovalRequest } from '../../src/agent/index.js';
import { UtcpAbortError, UtcpClient } from '../../src/index.js';
import { ScriptedModel, textTurn, toolCallsTurn } from '../../src/testing/scripted-model.js';

const clients: UtcpClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

async function newClient(): Promise<UtcpClient> {
  const client = await UtcpClient.create();
  clients.push(client);
  return client;
}

const ask = [userMessage('go')];

describe('runAgent', () => {
  it('keeps at most toolConcurrency calls in flight', async () => {
    const client = await newClient();
    let inFlight = 0;
    let maxInFlight = 0;
    const ran: string[] = [];
    await client.registerFunctions('work', [
      {
        name: 'job',
        inputs: { type: 'object', properties: { n: { type: 'integer' } } },
        handler: async (args) => {
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
          inFlight--;
          ran.push(String(args.n));
          return args.n;
        },
      },
    ]);
    const calls = Array.from({ length: 6 }, (_, n) => ({ name: 'work__job', args: { n }, id: `c${n}` }));
    const model = new ScriptedModel([toolCallsTurn(...calls), textTurn('done')]);
    const result = await runAgent({ client, model, messages: ask, toolConcurrency: 2 });
    expect(maxInFlight).toBe(2);
    expect(ran.sort()).toEqual(['0', '1', '2', '3', '4', '5']);
    expect(result.steps[0].toolResults.map((r) => [r.toolCallId, r.content])).toEqual(
      calls.map((c) => [c.id, String(c.args.n)]),
    );
    model.assertDone();
  });

  it('cuts long tool output, keeping head and tail with a note', async () => {
    const client = await newClient();
    const output = `START${'x'.repeat(50_000)}END`;
    await client.registerFunctions('big', [{ name: 'dump', handler: () => output }]);
    const events: AgentEvent[] = [];
    const model = new ScriptedModel([toolCallsTurn({ name: 'big__dump' }), textTurn('ok')]);
    await runAgent({ client, model, messages: ask, maxToolOutputChars: 1000, onEvent: (e) => events.push(e) });
    const sent = model.requests[1].messages.at(-1);
    expect(sent?.type).toBe('tool_result');
    const content = (sent as { content: string }).content;
    expect(content.length).toBeLessThanOrEqual(1000);
    expect(content.startsWith('START')).toBe(true);
    expect(content.endsWith('END')).toBe(true);
    expect(content).toMatch(/\[… \d+ of 50008 characters cut …\]/);
    expect(events.find((e) => e.type === 'tool_call_end')).toMatchObject({
      truncated: true,
      outputChars: 50_008,
      isError: false,
    });
  });

  it('asks the model once more without tools after maxSteps tool turns', async () => {
    const client = await newClient();
    await client.registerFunctions('t', [{ name: 'ping', handler: () => 'pong' }]);
    const model = new ScriptedModel([
      toolCallsTurn({ name: 't__ping' }),
      toolCallsTurn({ name: 't__ping' }),
      textTurn('final'),
    ]);
    const events: AgentEvent[] = [];
    const result = await runAgent({ client, model, messages: ask, maxSteps: 2, onEvent: (e) => events.push(e) });
    expect(result).toMatchObject({ text: 'final', stepLimitReached: true });
    expect(model.requests.map((r) => r.toolChoice)).toEqual(['auto', 'auto', 'none']);
    expect(events.filter((e) => e.type === 'step_limit_reached')).toEqual([
      { type: 'step_limit_reached', step: 3, maxSteps: 2 },
    ]);
    expect(result.steps.map((s) => s.step)).toEqual([1, 2, 3]);
    model.assertDone();
  });

  it('reports every step as events, in order, with durations', async () => {
    const client = await newClient();
    await client.registerFunctions('t', [{ name: 'ping', handler: () => 'pong' }]);
    const model = new ScriptedModel([toolCallsTurn({ name: 't__ping', id: 'p1' }), textTurn('done')]);
    const events: AgentEvent[] = [];
    await runAgent({ client, model, messages: ask, onEvent: (e) => events.push(e) });
    expect(events.map((e) => e.type)).toEqual([
      'model_request',
      'model_response',
      'tool_call_start',
      'tool_call_end',
      'model_request',
      'model_response',
    ]);
    expect(events[0]).toMatchObject({
      step: 1,
      provider: 'scripted',
      toolNames: ['t.ping'],
      toolChoice: 'auto',
      messageCount: 1,
    });
    expect(events[1]).toMatchObject({
      step: 1,
      toolCalls: [{ id: 'p1', name: 't.ping', arguments: '{}' }],
      durationMs: expect.any(Number),
    });
    expect(events[2]).toEqual({ type: 'tool_call_start', step: 1, toolCallId: 'p1', toolName: 't.ping', args: {} });
    expect(events[3]).toMatchObject({
      type: 'tool_call_end',
      toolCallId: 'p1',
      isError: false,
      durationMs: expect.any(Number),
      outputChars: 4,
    });
    expect(events[4]).toMatchObject({ step: 2, messageCount: 3 });
  });

  it('encodes names too long or colliding for providers and maps calls back to the right tools', async () => {
    const client = await newClient();
    const longName = `op_${'very_long_operation_name_'.repeat(4)}end`;
    const got: string[] = [];
    await client.registerFunctions('a', [{ name: 'b_c', handler: () => got.push('a.b_c') }]);
    await client.registerFunctions('a_b', [{ name: 'c', handler: () => got.push('a_b.c') }]);
    await client.registerFunctions('svc', [{ name: longName, handler: () => got.push('long') }]);
    const model = new ScriptedModel([
      (request) => {
        const names = request.tools.map((t) => t.name);
        expect(names.every((n) => /^[a-zA-Z0-9_-]{1,64}$/.test(n))).toBe(true);
        expect(new Set(names).size).toBe(3);
        return toolCallsTurn(...names.map((name) => ({ name })));
      },
      textTurn('ok'),
    ]);
    await runAgent({ client, model, messages: ask });
    expect(got.sort()).toEqual(['a.b_c', 'a_b.c', 'long'].sort());
  });

  it('offers only the selected tools', async () => {
    const client = await newClient();
    await client.registerFunctions('fs', [
      { name: 'read', handler: () => 'r' },
      { name: 'write', handler: () => 'w' },
    ]);
    await client.registerFunctions('net', [{ name: 'get', handler: () => 'g' }]);
    const model = new ScriptedModel([textTurn('ok')]);
    await runAgent({ client, model, messages: ask, tools: ['fs.r*', 'net.*'] });
    expect(model.requests[0].tools.map((t) => t.name)).toEqual(['fs__read', 'net__get']);
  });
});

describe('runAgent approvals', () => {
  async function toolsWithTags() {
    const client = await newClient();
    const ran: Array<{ tool: string; args: unknown }> = [];
    await client.registerFunctions('files', [
      {
        name: 'read',
        tags: ['read'],
        inputs: { type: 'object', properties: { path: { type: 'string' } } },
        handler: (args) => (ran.push({ tool: 'read', args }), 'contents'),
      },
      {
        name: 'write',
        tags: ['write'],
        inputs: { type: 'object', properties: { path: { type: 'string' } } },
        handler: (args) => (ran.push({ tool: 'write', args }), 'written'),
      },
      {
        name: 'remove',
        tags: ['write'],
        inputs: { type: 'object', properties: { path: { type: 'string' } } },
        handler: (args) => (ran.push({ tool: 'remove', args }), 'removed'),
      },
    ]);
    return { client, ran };
  }

  it('runs reads freely and asks for writes: allow, deny with a reason, edit the arguments', async () => {
    const { client, ran } = await toolsWithTags();
    const asked: ApprovalRequest[] = [];
    const model = new ScriptedModel([
      toolCallsTurn(
        { name: 'files__read', args: { path: 'a.txt' }, id: 'r' },
        { name: 'files__write', args: { path: 'b.txt' }, id: 'w' },
        { name: 'files__remove', args: { path: '/etc' }, id: 'x' },
      ),
      textTurn('done'),
    ]);
    const events: AgentEvent[] = [];
    await runAgent({
      client,
      model,
      messages: ask,
      onEvent: (e) => events.push(e),
      approval: {
        policy: [{ tags: ['write'], action: 'ask' }],
        approve: (req) => {
          asked.push(req);
          if (req.toolName === 'files.remove') return { type: 'deny', reason: 'never outside the project' };
          return { type: 'edit', args: { path: 'safe/b.txt' } };
        },
      },
    });
    expect(asked.map((a) => [a.toolName, a.args, a.rule?.action])).toEqual([
      ['files.write', { path: 'b.txt' }, 'ask'],
      ['files.remove', { path: '/etc' }, 'ask'],
    ]);
    expect(ran).toEqual([
      { tool: 'read', args: { path: 'a.txt' } },
      { tool: 'write', args: { path: 'safe/b.txt' } },
    ]);
    const results = model.requests[1].messages.filter((m) => m.type === 'tool_result');
    expect(results).toEqual([
      { type: 'tool_result', toolCallId: 'r', toolName: 'files__read', content: 'contents', isError: false },
      {
        type: 'tool_result',
        toolCallId: 'w',
        toolName: 'files__write',
        content: '[The user changed the arguments to {"path":"safe/b.txt"}]\nwritten',
        isError: false,
      },
      {
        type: 'tool_result',
        toolCallId: 'x',
        toolName: 'files__remove',
        content:
          'Denied: the call to files__remove was not approved: never outside the project. Do not retry it unchanged.',
        isError: true,
      },
    ]);
    expect(
      events.filter((e) => e.type === 'approval').map((e) => e.type === 'approval' && [e.toolCallId, e.decision, e.by]),
    ).toEqual([
      ['w', 'edit', 'approver'],
      ['x', 'deny', 'approver'],
    ]);
  });

  it('denies by policy by tool glob and by manual, without calling the approver', async () => {
    const { client, ran } = await toolsWithTags();
    const model = new ScriptedModel([
      toolCallsTurn({ name: 'files__remove', args: {}, id: 'x' }, { name: 'files__read', args: {}, id: 'r' }),
      textTurn('ok'),
    ]);
    let approverCalls = 0;
    await runAgent({
      client,
      model,
      messages: ask,
      approval: {
        policy: [
          { tools: ['*.remove'], action: 'deny', reason: 'removal is disabled' },
          { manuals: ['files'], action: 'ask' },
        ],
        defaultAction: 'allow',
        approve: () => (approverCalls++, { type: 'allow' }),
      },
    });
    expect(approverCalls).toBe(1);
    expect(ran.map((r) => r.tool)).toEqual(['read']);
    expect(model.requests[1].messages.at(-2)).toMatchObject({
      toolCallId: 'x',
      isError: true,
      content: expect.stringContaining('removal is disabled'),
    });
  });

  it('pauses on calls that need approval when no approver is configured, and resumes with the decision', async () => {
    const { client, ran } = await toolsWithTags();
    const model = new ScriptedModel([
      toolCallsTurn({ name: 'files__write', args: {}, id: 'w1' }, { name: 'files__read', args: {}, id: 'r1' }),
      textTurn('ok'),
    ]);
    const events: AgentEvent[] = [];
    const first = await runAgent({
      client,
      model,
      messages: ask,
      approval: { policy: [{ tags: ['write'], action: 'ask' }] },
      onEvent: (e) => events.push(e),
    });
    expect(first.status).toBe('paused');
    expect(ran).toEqual([]); // nothing of the paused turn ran, not even the allowed read
    expect(first.pendingApprovals).toEqual([
      { toolCallId: 'w1', toolName: 'files.write', args: {}, reason: 'no_approver' },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'paused', pending: [{ toolCallId: 'w1', toolName: 'files.write' }] });
    const state = JSON.parse(JSON.stringify(first.state));
    const done = await resumeAgent(state, { w1: { type: 'allow' } }, { client, model });
    expect(done.status).toBe('completed');
    expect(done.text).toBe('ok');
    expect(ran.map((r) => r.tool).sort()).toEqual(['read', 'write']);
    expect(model.requests[1].messages.slice(-2)).toMatchObject([
      { type: 'tool_result', toolCallId: 'w1' },
      { type: 'tool_result', toolCallId: 'r1' },
    ]);
  });

  it('pauses when the approver defers, and a resume without a decision stays paused', async () => {
    const { client, ran } = await toolsWithTags();
    const model = new ScriptedModel([toolCallsTurn({ name: 'files__write', args: {}, id: 'w1' }), textTurn('ok')]);
    const first = await runAgent({
      client,
      model,
      messages: ask,
      approval: { policy: [{ tags: ['write'], action: 'ask' }], approve: () => ({ type: 'defer' }) },
    });
    expect(first.pendingApprovals).toEqual([
      { toolCallId: 'w1', toolName: 'files.write', args: {}, reason: 'deferred' },
    ]);
    const again = await resumeAgent(first.state!, {}, { client, model });
    expect(again.status).toBe('paused');
    const denied = await resumeAgent(again.state!, { w1: { type: 'deny', reason: 'not today' } }, { client, model });
    expect(denied.text).toBe('ok');
    expect(ran).toEqual([]);
    expect(model.requests[1].messages.at(-1)).toMatchObject({
      isError: true,
      content: expect.stringContaining('not today'),
    });
  });

  it("a resume's approver decides the calls still waiting, and the resume's settings override the state's", async () => {
    const { client, ran } = await toolsWithTags();
    const model = new ScriptedModel([
      toolCallsTurn({ name: 'files__write', args: { path: 'a' }, id: 'w1' }),
      toolCallsTurn({ name: 'files__read', args: {}, id: 'r2' }),
      textTurn('ok'),
    ]);
    const policy = [{ tags: ['write'], action: 'ask' as const }];
    const first = await runAgent({ client, model, messages: ask, approval: { policy }, maxSteps: 5 });
    expect(first.status).toBe('paused');
    const asked: ApprovalRequest[] = [];
    const events: AgentEvent[] = [];
    const done = await resumeAgent(
      first.state!,
      {},
      {
        client,
        model,
        maxSteps: 1,
        onEvent: (e) => events.push(e),
        approval: { policy, approve: (req) => (asked.push(req), { type: 'allow' }) },
      },
    );
    expect(asked.map((a) => [a.toolCallId, a.toolName, a.args])).toEqual([['w1', 'files.write', { path: 'a' }]]);
    expect(ran).toEqual([{ tool: 'write', args: { path: 'a' } }]);
    expect(events.find((e) => e.type === 'approval')).toMatchObject({ toolCallId: 'w1', by: 'approver' });
    // maxSteps 1 from the resume: the next turn is the answer without tools (the scripted r2 turn is not a tool turn).
    expect(done.stepLimitReached).toBe(true);
    expect(model.requests[1].toolChoice).toBe('none');
  });

  it('settles promptly with an abort error when aborted while an approver is pending (the approver gets the signal)', async () => {
    const { client, ran } = await toolsWithTags();
    const model = new ScriptedModel([toolCallsTurn({ name: 'files__write', args: {} }), textTurn('ok')]);
    const controller = new AbortController();
    let approverSignal: AbortSignal | undefined;
    let asked!: () => void;
    const waiting = new Promise<void>((resolve) => (asked = resolve));
    const run = runAgent({
      client,
      model,
      messages: ask,
      signal: controller.signal,
      // An approver that never answers, as a person who walked away.
      approval: {
        policy: [{ tags: ['write'], action: 'ask' }],
        approve: (_req, { signal }) => ((approverSignal = signal), asked(), new Promise(() => {})),
      },
    });
    await waiting;
    const t0 = performance.now();
    controller.abort();
    await expect(run).rejects.toBeInstanceOf(UtcpAbortError);
    expect(performance.now() - t0).toBeLessThan(1000); // the issue asks < 100 ms; a generous bound for a loaded machine
    expect(approverSignal?.aborted).toBe(true);
    expect(ran).toEqual([]);
  });
});

describe('runAgent abort', () => {
  it('stops the run and the tool in flight when the signal aborts', async () => {
    const client = await newClient();
    const controller = new AbortController();
    let toolSawAbort = false;
    let started!: () => void;
    const toolStarted = new Promise<void>((resolve) => (started = resolve));
    await client.registerFunctions('slow', [
      {
        name: 'wait',
        handler: (_args, { signal }) =>
          new Promise((_resolve, reject) => {
            signal.addEventListener('abort', () => {
              toolSawAbort = true;
              reject(signal.reason);
            });
            started();
          }),
      },
    ]);
    const model = new ScriptedModel([toolCallsTurn({ name: 'slow__wait' }), textTurn('never asked')]);
    const run = runAgent({ client, model, messages: ask, signal: controller.signal });
    await toolStarted;
    controller.abort(new Error('user pressed stop'));
    await expect(run).rejects.toBeInstanceOf(UtcpAbortError);
    await expect(run).rejects.toMatchObject({
      code: 'ABORTED',
      cause: expect.objectContaining({ message: 'user pressed stop' }),
    });
    expect(toolSawAbort).toBe(true);
    expect(model.requests).toHaveLength(1);
  });

  it('rejects at once when the signal is already aborted, without asking the model', async () => {
    const client = await newClient();
    const model = new ScriptedModel([textTurn('never')]);
    await expect(runAgent({ client, model, messages: ask, signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'ABORTED',
    });
    expect(model.requests).toHaveLength(0);
  });
});
