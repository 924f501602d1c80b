import type { ApprovalRequest } from '../../src/agent/index.js';

const MAX_PREVIEW_LINES = 12;

function preview(text: string, mark: string): string[] {
  const lines = text.split('\n');
  const shown = lines.slice(0, MAX_PREVIEW_LINES).map((l) => `  ${mark} ${l}`);
  if (lines.length > MAX_PREVIEW_LINES) shown.push(`  … ${lines.length - MAX_PREVIEW_LINES} more lines`);
  return shown;
}

/** What a write, edit, patch or command would do, shown before asking for approval. */
export function describeChange(request: ApprovalRequest): string | undefined {
  const { args } = request;
  const bare = request.toolName.slice(request.toolName.indexOf('.') + 1);
  if (bare === 'bash' && typeof args.command === 'string') return `  $ ${args.command}`;
  if (bare === 'apply_patch' && typeof args.patch === 'string') return preview(args.patch, '│').join('\n');
  if (typeof args.path !== 'string') return undefined;
  if (bare === 'edit' && typeof args.old_string === 'string' && typeof args.new_string === 'string') {
    return [`  edit ${args.path}`, ...preview(args.old_string, '-'), ...preview(args.new_string, '+')].join('\n');
  }
  if ((bare === 'write' || bare === 'write_append') && typeof args.content === 'string') {
    return [`  ${bare === 'write' ? 'create' : 'append to'} ${args.path}`, ...preview(args.content, '+')].join('\n');
  }
  return undefined;
}
