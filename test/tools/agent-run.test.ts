/** A scripted agent run fixes a failing test in a small JavaScript project with read → edit → bash. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAgent, userMessage, type ChatRequest, type ChatResponse } from '../../src/agent/index.js';
import { ScriptedModel } from '../../src/testing/index.js';
import { codeWorkspace } from './helpers.js';

const PROJECT = {
  'package.json': '{ "name": "calc", "private": true, "scripts": { "test": "node test.js" } }\n',
  'src/sum.js':
    'function sum(values) {\n  let total = 0;\n  for (let i = 1; i < values.length; i++) total += values[i];\n  return total;\n}\n\nmodule.exports = { sum };\n',
  'test.js':
    "const assert = require('node:assert');\nconst { sum } = require('./src/sum.js');\nassert.strictEqual(sum([1, 2, 3]), 6);\nconsole.log('all tests passed');\n",
};

function toolName(request: ChatRequest, bare: string): string {
  const tool = request.tools.find((t) => t.name.endsWith(bare) && t.name.includes('code'));
  if (!tool) throw new Error(`no tool *${bare} offered: ${request.tools.map((t) => t.name).join(', ')}`);
  return tool.name;
}

function lastResult(request: ChatRequest): string {
  const m = [...request.messages].reverse().find((x) => x.type === 'tool_result');
  return m?.type === 'tool_result' ? m.content : '';
}

const call = (request: ChatRequest, bare: string, args: Record<string, unknown>): ChatResponse => ({
  text: '',
  toolCalls: [
    { id: `call_${bare}_${request.messages.length}`, name: toolName(request, bare), arguments: JSON.stringify(args) },
  ],
});

describe('a scripted coding agent', () => {
  it('runs the failing test, reads the code, edits it with an anchor, and sees the test pass', async () => {
    const { root, client, tools } = await codeWorkspace(PROJECT, { sandbox: 'auto' });
    const model = new ScriptedModel([
      (r) => call(r, 'bash', { command: 'node test.js' }),
      (r) => {
        if (!/AssertionError|Expected values to be strictly equal/.test(lastResult(r)))
          throw new Error(`the test did not fail first: ${lastResult(r)}`);
        return call(r, 'read', { path: 'src/sum.js' });
      },
      (r) => {
        // Take the anchor of the loop line from the read output, as a model would.
        const row = lastResult(r)
          .split('\n')
          .find((l) => l.includes('for (let i = 1'));
        if (!row) throw new Error(`read output without the loop: ${lastResult(r)}`);
        const anchor = row.split('\t')[0].trim();
        return call(r, 'edit', { path: 'src/sum.js', old_string: 'let i = 1;', new_string: 'let i = 0;', anchor });
      },
      (r) => {
        if (!lastResult(r).startsWith('Edited src/sum.js at line 3')) throw new Error(`edit failed: ${lastResult(r)}`);
        return call(r, 'bash', { command: 'node test.js' });
      },
      (r) => ({
        text: /all tests passed\n\[exit code 0 /.test(lastResult(r))
          ? 'Fixed: the loop skipped the first value.'
          : `Still failing: ${lastResult(r)}`,
        toolCalls: [],
      }),
    ]);
    const result = await runAgent({
      client,
      model,
      messages: [userMessage('The test fails. Fix src/sum.js.')],
      approval: {
        policy: [
          { tags: ['read'], action: 'allow' },
          { tags: ['write', 'exec'], action: 'ask' },
        ],
        approve: () => ({ type: 'allow' }),
      },
    });
    model.assertDone();
    expect(result.text).toBe('Fixed: the loop skipped the first value.');
    expect(await readFile(join(root, 'src/sum.js'), 'utf8')).toContain('for (let i = 0; i < values.length; i++)');
    expect(tools.toolNames).toContain('code.edit');
  });
});
