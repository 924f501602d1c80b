/**
 * The plan tools (docs/design/code-tools.md#plans): `save_plan` and `save_plan_append` write markdown plans, only
 * under the workspace's plans directory (the name is a plain file name, never a path); `update_plan` keeps an ordered
 * list of steps and returns it as a plan result (`{ type: 'plan', steps }`), which the agent loop announces as a
 * `plan` event so a UI can render it.
 */
import type { DirectFunction } from '../index.js';
import { optionalString, stringArg, type CodeToolsContext } from './context.js';

export const PLAN_STATUSES = ['pending', 'in_progress', 'completed'] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];

/** One step of a plan, as `update_plan` takes and returns it. */
export interface PlanStep {
  step: string;
  status: PlanStatus;
}

/** A plain name: letters, digits, `-`, `_` and inner dots, so it can only ever name a file in the plans directory. */
const PLAN_NAME = /^[A-Za-z0-9_-](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9_-])?$/;

function planPath(plansDir: string, args: Record<string, unknown>): string {
  const name = stringArg(args, 'name').replace(/\.md$/i, '');
  if (!PLAN_NAME.test(name) || name.includes('..'))
    throw new Error(`name must be a plain file name (letters, digits, - _ .; at most 64), not ${JSON.stringify(name)}`);
  return `${plansDir}/${name}.md`;
}

const NAME = { type: 'string', description: 'Plan name, a plain file name such as "refactor-auth" (.md is added)' };

export function planTools(ctx: CodeToolsContext, plansDir: string): DirectFunction[] {
  return [
    {
      name: 'save_plan',
      description: `Save a NEW markdown plan as ${plansDir}/<name>.md in the workspace (never overwrites: add to a plan with save_plan_append). Plans can only be written there.`,
      tags: ['write'],
      inputs: {
        type: 'object',
        properties: { name: NAME, content: { type: 'string', description: 'The plan, in markdown' } },
        required: ['name', 'content'],
        additionalProperties: false,
      },
      async handler(args) {
        const path = planPath(plansDir, args);
        const content = stringArg(args, 'content');
        if (Buffer.byteLength(content) > ctx.limits.maxFileBytes)
          throw new Error(`the plan is larger than the ${ctx.limits.maxFileBytes}-byte limit`);
        const file = await ctx.workspace.openForWrite(path, 'create');
        try {
          await file.handle.writeFile(content, 'utf8');
        } finally {
          await file.handle.close();
        }
        return `Saved the plan ${file.shown} (${Buffer.byteLength(content)} bytes)`;
      },
    },
    {
      name: 'save_plan_append',
      description: `Append markdown to the plan ${plansDir}/<name>.md (created when missing). Include the newlines you want.`,
      tags: ['write'],
      inputs: {
        type: 'object',
        properties: { name: NAME, content: { type: 'string', description: 'Markdown to append' } },
        required: ['name', 'content'],
        additionalProperties: false,
      },
      async handler(args) {
        const path = planPath(plansDir, args);
        const content = stringArg(args, 'content');
        const file = await ctx.workspace.openForWrite(path, 'append');
        try {
          const size = file.stats.size + Buffer.byteLength(content);
          if (size > ctx.limits.maxFileBytes)
            throw new Error(`appending would make ${file.shown} larger than the ${ctx.limits.maxFileBytes}-byte limit`);
          await file.handle.appendFile(content, 'utf8');
          return `${file.created ? 'Created' : 'Appended to'} the plan ${file.shown}, now ${size} bytes`;
        } finally {
          await file.handle.close();
        }
      },
    },
    {
      name: 'update_plan',
      description:
        'Replace the current step list of your plan: every step in order with its status (pending, in_progress, completed); at most one in_progress. Shown to the user as you go.',
      tags: ['read'],
      inputs: {
        type: 'object',
        properties: {
          steps: {
            type: 'array',
            maxItems: 100,
            items: {
              type: 'object',
              properties: {
                step: { type: 'string', minLength: 1, maxLength: 500 },
                status: { type: 'string', enum: [...PLAN_STATUSES] },
              },
              required: ['step', 'status'],
              additionalProperties: false,
            },
          },
          explanation: { type: 'string', maxLength: 2000, description: 'Why the plan changed (optional)' },
        },
        required: ['steps'],
        additionalProperties: false,
      },
      async handler(args) {
        const raw = args.steps;
        if (!Array.isArray(raw)) throw new Error('steps must be an array');
        const steps: PlanStep[] = raw.map((s, i) => {
          const step = (s as { step?: unknown })?.step;
          const status = (s as { status?: unknown })?.status;
          if (typeof step !== 'string' || step.trim() === '')
            throw new Error(`steps[${i}].step must be a non-empty string`);
          if (!PLAN_STATUSES.includes(status as PlanStatus))
            throw new Error(`steps[${i}].status must be one of ${PLAN_STATUSES.join(', ')}`);
          return { step, status: status as PlanStatus };
        });
        if (steps.filter((s) => s.status === 'in_progress').length > 1)
          throw new Error('at most one step may be in_progress');
        const explanation = optionalString(args, 'explanation');
        return { type: 'plan', steps, ...(explanation ? { explanation } : {}) };
      },
    },
  ];
}
