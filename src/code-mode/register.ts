/**
 * `registerCodeMode`: code mode as an ordinary manual of `direct` tools, so the agent loop, `serve-mcp` and the CLI
 * call it like any tool (docs/design/code-mode.md#tools).
 */
import type { DirectFunction, JsonObject, RegisterManualResult, Tool, UtcpClient } from '../index.js';
import { declarationsFor } from './declarations.js';
import { CodeModeError } from './code-mode-error.js';
import { runCode } from './run-code.js';
import { selectTools, type CodeToolSelection } from './script-names.js';

export interface CodeModeOptions {
  /** Manual name: the tools are `<manualName>.run` and `<manualName>.describe`. @default 'code_mode' */
  manualName?: string;
  /** Which tools scripts may call. @default every registered tool except this manual's own */
  tools?: CodeToolSelection;
  /** A script's deadline when the caller gives none, in milliseconds. @default 30000 */
  timeoutMs?: number;
  /** The longest deadline a caller may ask for, in milliseconds. @default 120000 */
  maxTimeoutMs?: number;
  /** Heap limit of each script, in MiB. @default 64 */
  memoryLimitMb?: number;
  /**
   * Up to this many callable tools at registration, their declarations are part of `run`'s description; past it
   * the description tells the model to search with `describe` first. @default 20
   */
  inlineDeclarations?: number;
}

const MAX_LOG_CHARS_IN_ERROR = 2000;
const DEFAULT_DESCRIBE_LIMIT = 8;

function runDescription(manualName: string, inline: string | undefined, count: number): string {
  const head =
    'Runs a TypeScript or JavaScript script that calls tools as async functions and returns its `return` value, ' +
    'console output and the calls made. Write the whole multi-step task as one script: `const a = await manual.tool({ ... })`, ' +
    'loops, Promise.all and try/catch work; a failed tool call throws an Error (with `code`) you can catch. ' +
    'There are no timers, network, files or modules except through the tools.';
  if (inline !== undefined) return `${head}\n\nThe tools:\n${inline}`;
  return `${head}\n\n${count} tools are available: call ${manualName}.describe with a query first to get the TypeScript declarations of the tools you need.`;
}

function callable(tools: readonly Tool[], selection: CodeToolSelection | undefined, own: string): Tool[] {
  return selectTools(tools, selection).filter((t) => !t.name.startsWith(`${own}.`));
}

/**
 * Registers the `<manualName>` manual: `run` (`{ code, timeoutMs? }` → `{ result, logs, calls }`) and `describe`
 * (`{ query?, tools?, limit? }` → TypeScript declarations). Scripts call the client's tools through `runCode`, each
 * call through the caller's `callGate` when it has one (the agent loop's approval policy).
 */
export async function registerCodeMode(
  client: UtcpClient,
  options: CodeModeOptions = {},
): Promise<RegisterManualResult> {
  const manualName = options.manualName ?? 'code_mode';
  const defaultTimeout = options.timeoutMs ?? 30_000;
  const maxTimeout = options.maxTimeoutMs ?? Math.max(120_000, defaultTimeout);
  const inlineLimit = options.inlineDeclarations ?? 20;
  const selection: CodeToolSelection = (tool) => callable([tool], options.tools, manualName).length === 1;
  const now = callable(await client.getTools(), options.tools, manualName);
  const inline = now.length <= inlineLimit ? declarationsFor(now) : undefined;

  const run: DirectFunction = {
    name: 'run',
    description: runDescription(manualName, inline, now.length),
    inputs: {
      type: 'object',
      properties: {
        code: { type: 'string', description: 'The script. Top-level await and return are allowed.' },
        timeoutMs: {
          type: 'integer',
          minimum: 1,
          maximum: maxTimeout,
          description: `Deadline of the whole script in milliseconds. Default ${defaultTimeout}.`,
        },
      },
      required: ['code'],
      additionalProperties: false,
    },
    tags: ['code_mode'],
    handler: async (args, context) => {
      try {
        const out = await runCode(client, String(args.code), {
          timeoutMs: Math.min(typeof args.timeoutMs === 'number' ? args.timeoutMs : defaultTimeout, maxTimeout),
          ...(options.memoryLimitMb !== undefined ? { memoryLimitMb: options.memoryLimitMb } : {}),
          tools: selection,
          signal: context.signal,
          ...(context.callGate ? { callGate: context.callGate } : {}),
        });
        return {
          result: out.result === undefined ? null : out.result,
          logs: out.logs,
          calls: out.calls.map((c) => ({ tool: c.tool, ok: c.ok, ...(c.error ? { error: c.error } : {}) })),
        } as JsonObject;
      } catch (error) {
        if (!(error instanceof CodeModeError) || error.logs.length === 0) throw error;
        const logs = error.logs.join('\n');
        const tail = logs.length > MAX_LOG_CHARS_IN_ERROR ? `…${logs.slice(-MAX_LOG_CHARS_IN_ERROR)}` : logs;
        const withLogs = new CodeModeError(error.code, `${error.message}\nConsole output:\n${tail}`, { cause: error });
        withLogs.logs = error.logs;
        withLogs.calls = error.calls;
        throw withLogs;
      }
    },
  };

  const describe: DirectFunction = {
    name: 'describe',
    description:
      `TypeScript declarations of tools callable from ${manualName}.run: search by keywords (query), or name them ` +
      '(tools: names or globs such as "github.*").',
    inputs: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'Keywords describing the tools you need.' },
        tools: { type: 'array', items: { type: 'string' }, description: 'Tool names or globs.' },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: 50,
          description: `Most tools to return. Default ${DEFAULT_DESCRIBE_LIMIT}.`,
        },
      },
      additionalProperties: false,
    },
    tags: ['code_mode'],
    handler: async (args) => {
      const limit = typeof args.limit === 'number' ? args.limit : DEFAULT_DESCRIBE_LIMIT;
      let found: Tool[];
      if (typeof args.query === 'string' && args.query.trim() !== '') {
        const hits = await client.searchTools(args.query, { limit: limit * 2 });
        found = callable(hits, options.tools, manualName).slice(0, limit);
      } else if (Array.isArray(args.tools)) {
        found = callable(
          callable(await client.getTools(), options.tools, manualName),
          args.tools as string[],
          manualName,
        );
      } else {
        throw new CodeModeError('INVALID_ARGUMENTS', `${manualName}.describe needs "query" or "tools"`);
      }
      return found.length > 0 ? declarationsFor(found) : '// No tools matched. Try other keywords.';
    },
  };

  return client.registerFunctions(manualName, [run, describe]);
}
