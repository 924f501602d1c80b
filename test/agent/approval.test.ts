import { describe, expect, it } from 'vitest';
import { approvalActionFor, type ApprovalRule } from '../../src/agent/loop/approval.js';
import type { Tool } from '../../src/index.js';

function tool(name: string, tags: string[] = []): Tool {
  return { name, description: '', inputs: {}, outputs: {}, tags, tool_call_template: { call_template_type: 'direct' } };
}

const policy: ApprovalRule[] = [
  { tools: ['shell.*'], action: 'deny', reason: 'no shell' },
  { tags: ['write', 'command'], action: 'ask' },
  { manuals: ['git*'], tags: ['read'], action: 'allow' },
  { manuals: ['github'], action: 'ask' },
];

describe('approvalActionFor', () => {
  it('applies the first matching rule', () => {
    expect(approvalActionFor(tool('shell.run', ['write']), { policy })).toEqual({ action: 'deny', rule: policy[0] });
    expect(approvalActionFor(tool('files.save', ['Write']), { policy })).toEqual({ action: 'ask', rule: policy[1] });
  });

  it('needs every selector of a rule to match', () => {
    expect(approvalActionFor(tool('github.list_issues', ['read']), { policy }).action).toBe('allow');
    expect(approvalActionFor(tool('github.close_issue'), { policy })).toEqual({ action: 'ask', rule: policy[3] });
  });

  it('falls back to the default action, allow unless set', () => {
    expect(approvalActionFor(tool('weather.get'), { policy })).toEqual({ action: 'allow' });
    expect(approvalActionFor(tool('weather.get'), { policy, defaultAction: 'ask' })).toEqual({ action: 'ask' });
  });

  it('matches tool globs across the manual separator and single characters with ?', () => {
    expect(approvalActionFor(tool('a.b.c'), { policy: [{ tools: ['a*c'], action: 'deny' }] }).action).toBe('deny');
    expect(approvalActionFor(tool('fs.rm'), { policy: [{ tools: ['fs.r?'], action: 'deny' }] }).action).toBe('deny');
    expect(approvalActionFor(tool('fs.rmdir'), { policy: [{ tools: ['fs.r?'], action: 'deny' }] }).action).toBe(
      'allow',
    );
    expect(approvalActionFor(tool('fs(x).rm'), { policy: [{ tools: ['fs(x).*'], action: 'deny' }] }).action).toBe(
      'deny',
    );
  });
});
