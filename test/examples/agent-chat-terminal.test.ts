import { describe, expect, it } from 'vitest';
import type { ApprovalRequest } from '../../src/agent/index.js';
import { terminalApprover, type AskLine } from '../../examples/agent-chat/terminal-approver.js';
import { createToolLog, shortReason } from '../../examples/agent-chat/tool-log.js';
import { describeChange } from '../../examples/coding-agent/describe-change.js';

const request = (toolName: string, args: Record<string, unknown>): ApprovalRequest =>
  ({ toolCallId: 'c1', toolName, args, tool: { name: toolName } }) as unknown as ApprovalRequest;

/** An AskLine that plays back answers and records the questions (and prefills) it was given. */
function scriptedAsk(answers: string[]) {
  const asked: Array<{ question: string; prefill?: string }> = [];
  const ask: AskLine = async (question, { prefill }) => {
    asked.push({ question, prefill });
    const next = answers.shift();
    if (next === undefined) throw new Error(`unexpected question: ${question}`);
    return next;
  };
  return { ask, asked };
}

const signal = new AbortController().signal;

describe('terminalApprover', () => {
  it('allows on y and shows the call in the question', async () => {
    const { ask, asked } = scriptedAsk(['y']);
    const approve = terminalApprover({ ask, write: () => {} });
    expect(await approve(request('fs.rm', { path: 'a' }), { signal })).toEqual({ type: 'allow' });
    expect(asked[0].question).toBe('? fs.rm({"path":"a"}) run it? [y/n/e] ');
  });

  it('denies on n, with the reason typed after a colon', async () => {
    const approve = terminalApprover({ ask: scriptedAsk(['n']).ask, write: () => {} });
    expect(await approve(request('x.y', {}), { signal })).toEqual({ type: 'deny', reason: 'the user declined' });
    const withReason = terminalApprover({ ask: scriptedAsk(['no: use the staging server']).ask, write: () => {} });
    expect(await withReason(request('x.y', {}), { signal })).toEqual({
      type: 'deny',
      reason: 'use the staging server',
    });
  });

  it('edits: prefills the model arguments and returns the typed JSON', async () => {
    const { ask, asked } = scriptedAsk(['e', '{"path":"b"}']);
    const approve = terminalApprover({ ask, write: () => {} });
    expect(await approve(request('fs.rm', { path: 'a' }), { signal })).toEqual({ type: 'edit', args: { path: 'b' } });
    expect(asked[1]).toEqual({ question: 'arguments (JSON): ', prefill: '{"path":"a"}' });
  });

  it('asks again after invalid JSON, a non-object, or an unknown answer', async () => {
    const notes: string[] = [];
    const { ask } = scriptedAsk(['e', '{oops', 'e', '[1]', 'maybe', 'y']);
    const approve = terminalApprover({ ask, write: (t) => notes.push(t) });
    expect(await approve(request('x.y', {}), { signal })).toEqual({ type: 'allow' });
    expect(notes[0]).toMatch(/^ {2}not valid JSON: /);
    expect(notes[1]).toBe('  the arguments must be a JSON object\n');
    expect(notes[2]).toMatch(/^ {2}answer y \(run it\), n/);
  });

  it('writes the description before asking', async () => {
    const out: string[] = [];
    const approve = terminalApprover({
      ask: scriptedAsk(['y']).ask,
      write: (t) => out.push(t),
      describe: () => '  edit a.txt',
    });
    await approve(request('x.y', {}), { signal });
    expect(out).toEqual(['  edit a.txt\n']);
  });
});

describe('createToolLog', () => {
  function logLines(events: Parameters<ReturnType<typeof createToolLog>>[0][]): string[] {
    let out = '';
    const log = createToolLog({ write: (t) => (out += t) });
    for (const e of events) log(e);
    return out.split('\n').filter(Boolean);
  }

  it('prints start and success lines', () => {
    expect(
      logLines([
        { type: 'tool_call_start', step: 1, toolCallId: 'a', toolName: 'w.get', args: { city: 'Paris' } },
        {
          type: 'tool_call_end',
          step: 1,
          toolCallId: 'a',
          toolName: 'w.get',
          isError: false,
          durationMs: 12.4,
          outputChars: 3,
          truncated: false,
        },
      ]),
    ).toEqual(['→ w.get({"city":"Paris"})', '✓ w.get (12 ms)']);
  });

  it('prints the failure reason without the client prefix', () => {
    expect(
      logLines([
        { type: 'tool_call_start', step: 1, toolCallId: 'a', toolName: 'w.get', args: {} },
        {
          type: 'error',
          step: 1,
          phase: 'tool_call',
          toolCallId: 'a',
          toolName: 'w.get',
          error: new Error('Tool w.get failed: HTTP 503 from http://x/y'),
        },
        {
          type: 'tool_call_end',
          step: 1,
          toolCallId: 'a',
          toolName: 'w.get',
          isError: true,
          durationMs: 5,
          outputChars: 9,
          truncated: false,
        },
      ]),
    ).toEqual(['→ w.get({})', '× w.get failed: HTTP 503 from http://x/y']);
  });

  it('prints failures that happen before a call starts', () => {
    expect(
      logLines([
        {
          type: 'error',
          step: 1,
          phase: 'tool_call',
          toolCallId: 'b',
          toolName: 'nope',
          error: new Error('Tool not found: nope'),
        },
      ]),
    ).toEqual(['× nope failed: Tool not found: nope']);
  });

  it('prints denials and edits', () => {
    expect(
      logLines([
        {
          type: 'approval',
          step: 1,
          toolCallId: 'a',
          toolName: 'fs.rm',
          decision: 'deny',
          by: 'approver',
          reason: 'no',
        },
        { type: 'approval', step: 1, toolCallId: 'b', toolName: 'fs.mv', decision: 'edit', by: 'approver' },
        { type: 'approval', step: 1, toolCallId: 'c', toolName: 'fs.ls', decision: 'allow', by: 'approver' },
      ]),
    ).toEqual(['× fs.rm denied: no', '✎ fs.mv: arguments edited']);
  });

  it('cuts long arguments', () => {
    const [line] = logLines([
      { type: 'tool_call_start', step: 1, toolCallId: 'a', toolName: 't', args: { text: 'x'.repeat(500) } },
    ]);
    expect(line.length).toBeLessThan(220);
    expect(line.endsWith('…)')).toBe(true);
  });

  it('shortReason keeps the first line', () => {
    expect(shortReason(new Error('first\nsecond'), 't')).toBe('first');
  });
});

describe('describeChange', () => {
  it('previews an edit as removed and added lines', () => {
    expect(describeChange(request('code.edit', { path: 'a.ts', old_string: 'a\nb', new_string: 'c' }))).toBe(
      '  edit a.ts\n  - a\n  - b\n  + c',
    );
  });

  it('previews a write with its first lines', () => {
    const content = Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n');
    const text = describeChange(request('code.write', { path: 'n.txt', content }))!;
    expect(text.split('\n')[0]).toBe('  create n.txt');
    expect(text.split('\n').at(-1)).toBe('  … 8 more lines');
  });

  it('shows the command of a bash call', () => {
    expect(describeChange(request('code.bash', { command: 'npm test' }))).toBe('  $ npm test');
  });
});
