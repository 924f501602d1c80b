import type { ApprovalRequest } from '../../src/agent/index.js';

const MAX_PREVIEW_LINES = 12;

function preview(text: string, mark: string): string[] {
  const lines = text.split('\n');
  const shown = lines.slice(0, MAX_PREVIEW_LINES).map((l) => `  ${mark} ${l}`);
  if (lines.length > MAX_PREVIEW_LINES) shown.push(`  … ${lines.length - MAX_PREVIEW_LINES} more lines`);
  return shown;
}

/** What a write or edit would do, shown before asking for approval. */
export function describeChange(request: ApprovalRequest): string | undefined {
  const { args } = request;
  if (typeof args.path !== 'string') return undefined;
  if (request.toolName === 'workspace.edit' && typeof args.old_string === 'string' && typeof args.new_string === 'string') {
    return [`  edit ${args.path}`, ...preview(args.old_string, '-'), ...preview(args.new_string, '+')].join('\n');
  }
  if (request.toolName === 'workspace.write' && typeof args.content === 'string') {
    return [`  create ${args.path}`, ...preview(args.content, '+')].join('\n');
  }
  return undefined;
}
