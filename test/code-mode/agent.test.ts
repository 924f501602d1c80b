/** Code mode in the agent loop: the calls a script makes pass the run's approval policy (docs/design/code-mode.md#approvals). */
import { describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { registerCodeMode } from '../../src/code-mode/index.js';
import { runAgent, userMessage, type AgentEvent, type ApprovalRequest } from '../../src/agent/index.js';
import { ScriptedModel, textTurn, toolCallsTurn } from '../../src/testing/scripted-model.js';

async function setup(): Promise<{ client: UtcpClient; ran: string[] }> {
  const client = await UtcpClient.create({});
  onTestFinished(() => client.close());
  const ran: string[] = [];
  await client.registerFunctions('files', [
    {
      name: 'read',
      tags: ['read'],
      inputs: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      handler: ({ path }) => {
        ran.push(`read ${path}`);
        return `contents of ${path}`;
      },
    },
    {
      name: 'delete',
      tags: ['write'],
      inputs: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      handler: ({ path }) => {
        ran.push(`delete ${path}`);
        return 'deleted';
      },
    },
    {
      name: 'wipe',
      handler: () => {
        ran.push('wipe');
        return 'wiped';
      },
    },
  ]);
  await registerCodeMode(client);
  return { client, ran };
}

const SCRIPT = `
const out = [];
for (const [name, args] of [['read', { path: 'a' }], ['delete', { path: 'b' }], ['delete', { path: 'c' }], ['wipe', {}]]) {
  try { out.push(await files[name](args)); } catch (e) { out.push('refused: ' + e.message); }
}
return out;
`;

function resultOf(model: ScriptedModel): { result: string[] } {
  const last = model.requests.at(-1)!.messages.at(-1) as { content: string };
  return JSON.parse(last.content);
}

describe('code mode in the agent loop', () => {
  it("applies the run's policy and approver to each call a script makes", async () => {
    const { client, ran } = await setup();
    const model = new ScriptedModel([
      toolCallsTurn({ name: 'code_mode__run', args: { code: SCRIPT } }),
      textTurn('done'),
    ]);
    const asked: ApprovalRequest[] = [];
    const events: AgentEvent[] = [];
    const result = await runAgent({
      client,
      model,
      messages: [userMessage('clean up')],
      onEvent: (e) => events.push(e),
      approval: {
        policy: [
          { tools: ['files.wipe'], action: 'deny', reason: 'never wipe' },
          { tags: ['write'], action: 'ask' },
        ],
        approve: (request) => {
          asked.push(request);
          return request.args.path === 'b' ? { type: 'allow' } : { type: 'deny', reason: 'keep c' };
        },
      },
    });
    expect(result.text).toBe('done');
    expect(ran).toEqual(['read a', 'delete b']);
    expect(asked.map((r) => [r.toolName, r.args])).toEqual([
      ['files.delete', { path: 'b' }],
      ['files.delete', { path: 'c' }],
    ]);
    const out = resultOf(model).result;
    expect(out.slice(0, 2)).toEqual(['contents of a', 'deleted']);
    expect(out[2]).toMatch(/^refused: Denied: .*keep c/);
    expect(out[3]).toMatch(/^refused: Denied: .*never wipe/);
    const approvals = events.filter((e) => e.type === 'approval');
    expect(approvals.map((e) => [e.toolName, e.decision, e.by, e.nested])).toEqual([
      ['files.delete', 'allow', 'approver', true],
      ['files.delete', 'deny', 'approver', true],
      ['files.wipe', 'deny', 'policy', true],
    ]);
  });

  it("refuses a script's call that needs approval when no approver can answer, and calls outside the run's tools", async () => {
    const { client, ran } = await setup();
    const model = new ScriptedModel([
      toolCallsTurn({ name: 'code_mode__run', args: { code: SCRIPT } }),
      textTurn('done'),
    ]);
    await runAgent({
      client,
      model,
      messages: [userMessage('clean up')],
      tools: ['code_mode.*', 'files.read', 'files.delete'],
      approval: { policy: [{ tags: ['write'], action: 'ask' }] },
    });
    expect(ran).toEqual(['read a']);
    const out = resultOf(model).result;
    expect(out[1]).toMatch(/^refused: Denied: .*cannot wait/);
    expect(out[3]).toMatch(/^refused: Tool not found: files\.wipe/);
  });

  it('codeModeTool: the model is offered only search_tools and the code-mode tool; search answers with declarations', async () => {
    const { client, ran } = await setup();
    const model = new ScriptedModel([
      toolCallsTurn({ name: 'search_tools', args: { query: 'read file' } }),
      toolCallsTurn({ name: 'code_mode__run', args: { code: "return await files.read({ path: 'x' })" } }),
      textTurn('done'),
    ]);
    const result = await runAgent({
      client,
      model,
      messages: [userMessage('read x')],
      codeModeTool: 'code_mode.run',
    });
    expect(result.text).toBe('done');
    expect(model.requests[0].tools?.map((t) => t.name)).toEqual(['search_tools', 'code_mode__run']);
    expect(model.requests[1].tools?.map((t) => t.name)).toEqual(['search_tools', 'code_mode__run']);
    const searched = model.requests[1].messages.at(-1) as { content: string };
    expect(searched.content).toContain('declare const files: {');
    expect(searched.content).toContain('read(args: {');
    expect(ran).toEqual(['read x']);
    await expect(
      runAgent({ client, model: new ScriptedModel([]), messages: [userMessage('x')], codeModeTool: 'nope.run' }),
    ).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
  });

  it("an approver's edit changes the arguments of a script's call", async () => {
    const { client, ran } = await setup();
    const code = "return await files.delete({ path: 'important' });";
    const model = new ScriptedModel([toolCallsTurn({ name: 'code_mode__run', args: { code } }), textTurn('done')]);
    await runAgent({
      client,
      model,
      messages: [userMessage('delete')],
      approval: {
        policy: [{ tags: ['write'], action: 'ask' }],
        approve: () => ({ type: 'edit', args: { path: 'scratch' } }),
      },
    });
    expect(ran).toEqual(['delete scratch']);
    expect(resultOf(model).result).toBe('deleted');
  });
});
