/**
 * `bash`, `bash_output`, `stop_process` and `list_processes` (docs/design/code-tools.md#processes): the tools a
 * model calls; the processes themselves are kept by `ProcessManager` (process-manager.ts).
 */
import type { DirectFunction } from '../index.js';
import { createDeadline } from '../internal.js';
import { boolArg, intArg, optionalString, stringArg, type CodeToolsContext } from './context.js';
import { policyViolation } from './policy.js';
import { describeExit, type ManagedProcess, type ProcessManager, type ProcessOptions } from './process-manager.js';
import { untrustedPattern, waitMatcher } from './regex.js';

export { OutputBuffer } from './output-buffer.js';
export { ProcessManager } from './process-manager.js';

function elapsed(p: ManagedProcess): string {
  const ms = Date.now() - p.startedAt;
  return ms < 10_000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}

/**
 * Waits until the process finishes, `signal` aborts (rejects with its reason), or `ms` pass (a deadline of the
 * deadline helper: docs/design/http-exchange.md#deadlines).
 */
function waitFor(
  p: ManagedProcess,
  ms: number,
  signal: AbortSignal,
  until?: () => boolean,
): Promise<'done' | 'timeout' | 'matched'> {
  return new Promise((resolve, reject) => {
    if (p.finished) return resolve('done');
    if (until?.()) return resolve('matched');
    const deadline = createDeadline(signal, ms, 'bash wait');
    const onData = () => {
      if (until?.()) finish('matched');
    };
    let offAbort = () => {};
    const stopWatching = () => {
      offAbort();
      deadline.dispose();
      p.child.stdout?.off('data', onData);
      p.child.stderr?.off('data', onData);
    };
    const finish = (v: 'done' | 'timeout' | 'matched') => {
      stopWatching();
      resolve(v);
    };
    if (until) {
      // Listeners added after the buffer's own, so the buffer already holds the chunk.
      p.child.stdout?.on('data', onData);
      p.child.stderr?.on('data', onData);
    }
    // The wait's own timer ends the wait quietly; the caller's abort rejects with its reason.
    offAbort = deadline.onAbort((reason) => {
      if (deadline.timedOut) return finish('timeout');
      stopWatching();
      reject(reason);
    });
    void p.done.then(() => finish('done'));
  });
}

export function processTools(ctx: CodeToolsContext, pm: ProcessManager, opts: ProcessOptions): DirectFunction[] {
  const maxInline = ctx.limits.inlineOutputBytes;
  const bash: DirectFunction = {
    name: 'bash',
    description:
      `Run a shell command (${opts.shell} -c) in the workspace. Sandbox: ${pm.sandboxLabel}. ` +
      `Output (stdout and stderr together) comes back inline, head and tail kept. A command still running after timeout_ms (default ${opts.defaultTimeoutMs}) keeps running in the background ` +
      'and you get its process id: read more with bash_output, stop it with stop_process. Set run_in_background to start a server or watcher and get its id at once. ' +
      'Obviously destructive commands (rm -rf /, mkfs, fork bombs, shutdown) are refused.',
    tags: ['exec', 'write'],
    inputs: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The command line' },
        cwd: { type: 'string', description: 'Working directory relative to the workspace root. Default "."' },
        timeout_ms: {
          type: 'integer',
          minimum: 1,
          maximum: opts.maxTimeoutMs,
          description: `How long to wait before leaving the command in the background. Default ${opts.defaultTimeoutMs}`,
        },
        run_in_background: { type: 'boolean', description: 'Return the process id at once instead of waiting' },
      },
      required: ['command'],
      additionalProperties: false,
    },
    async handler(args, { signal }) {
      const command = stringArg(args, 'command');
      if (command.trim() === '') throw new Error('command must not be empty');
      const refused = policyViolation(command, opts.policy);
      if (refused)
        throw new Error(
          `command refused by the command policy (${refused}); this is never allowed, whatever the sandbox`,
        );
      const timeout = Math.min(intArg(args, 'timeout_ms', opts.defaultTimeoutMs), opts.maxTimeoutMs);
      const dir = await ctx.workspace.resolve(optionalString(args, 'cwd') ?? '.');
      const proc = await pm.start(command, dir.real, dir.rootReal);
      if (boolArg(args, 'run_in_background')) {
        return `Started process ${proc.id} in the background (pid ${proc.pid ?? '?'}; sandbox ${opts.sandbox.mode}). Read its output with bash_output {"id": ${proc.id}}; stop it with stop_process.`;
      }
      let outcome;
      try {
        outcome = await waitFor(proc, timeout, signal);
      } catch (error) {
        await pm.stop(proc);
        throw error;
      }
      if (outcome !== 'done') {
        const { text, next } = proc.output.read(0, maxInline);
        proc.readCursor = next;
        return `${text}${text && !text.endsWith('\n') ? '\n' : ''}[still running after ${timeout} ms: moved to the background as process ${proc.id}. bash_output {"id": ${proc.id}} shows new output; stop_process {"id": ${proc.id}} stops it]`;
      }
      proc.readCursor = proc.output.total;
      const out = proc.output.headAndTail(maxInline);
      return `${out}${out && !out.endsWith('\n') ? '\n' : ''}[${describeExit(proc)} · ${elapsed(proc)} · sandbox ${opts.sandbox.mode}]`;
    },
  };

  const bashOutput: DirectFunction = {
    name: 'bash_output',
    description:
      'New output of a background process since the last read (or from cursor), with its status and the next cursor. ' +
      'wait_ms waits for new output or the exit (and wait_for, a regular expression, waits until the output matches) instead of polling.',
    tags: ['read'],
    inputs: {
      type: 'object',
      properties: {
        id: { type: 'integer', description: 'Process id from bash' },
        cursor: {
          type: 'integer',
          minimum: 0,
          description:
            'Byte offset to read from (the "next cursor" of an earlier read). Default: where the last read stopped',
        },
        wait_ms: {
          type: 'integer',
          minimum: 0,
          maximum: opts.maxTimeoutMs,
          description: 'Wait up to this long for output or the exit. Default 0',
        },
        wait_for: {
          type: 'string',
          description:
            'With wait_ms: wait until the new output matches this regular expression (RE2 syntax: no lookaround, no backreferences)',
        },
      },
      required: ['id'],
      additionalProperties: false,
    },
    async handler(args, { signal }) {
      const proc = pm.get(args.id);
      const cursor = args.cursor === undefined ? proc.readCursor : intArg(args, 'cursor', 0, 0);
      const waitMs = intArg(args, 'wait_ms', 0, 0);
      const pattern = optionalString(args, 'wait_for');
      const re = pattern === undefined ? undefined : await untrustedPattern('bash_output', 'wait_for', pattern);
      let outcome = '';
      if (waitMs > 0) {
        const start = proc.output.total;
        const until = re ? waitMatcher(proc.output, cursor, re) : () => proc.output.total > start;
        outcome = await waitFor(proc, waitMs, signal, until);
      }
      const { text, next, dropped } = proc.output.read(cursor, maxInline);
      proc.readCursor = next;
      const more = next < proc.output.total;
      const status = describeExit(proc);
      const notes = [
        dropped > 0 ? `${dropped} older bytes were dropped from the buffer` : '',
        re && outcome === 'timeout' ? `wait_for did not match within ${waitMs} ms` : '',
        more ? 'more output is waiting: call again with the next cursor' : '',
      ].filter(Boolean);
      return `${text}${text && !text.endsWith('\n') ? '\n' : ''}[process ${proc.id}: ${status} · next cursor ${next}${notes.length ? ` · ${notes.join(' · ')}` : ''}]`;
    },
  };

  const stopProcess: DirectFunction = {
    name: 'stop_process',
    description: `Stop a background process and everything it started: SIGTERM to its process group, then SIGKILL after ${opts.killGraceMs} ms (or grace_ms).`,
    tags: ['exec'],
    inputs: {
      type: 'object',
      properties: {
        id: { type: 'integer', description: 'Process id from bash' },
        grace_ms: {
          type: 'integer',
          minimum: 0,
          maximum: 60_000,
          description: `Wait this long after SIGTERM before SIGKILL. Default ${opts.killGraceMs}`,
        },
      },
      required: ['id'],
      additionalProperties: false,
    },
    async handler(args) {
      const proc = pm.get(args.id);
      const result = await pm.stop(proc, intArg(args, 'grace_ms', opts.killGraceMs, 0));
      const { text } = proc.output.read(proc.readCursor, maxInline);
      proc.readCursor = proc.output.total;
      return `${result}${text ? `\nlast output:\n${text}` : ''}`;
    },
  };

  const listProcesses: DirectFunction = {
    name: 'list_processes',
    description: 'The processes bash started: id, status, running time, bytes of output and command.',
    tags: ['read'],
    inputs: { type: 'object', properties: {}, additionalProperties: false },
    async handler() {
      const procs = pm.list();
      if (procs.length === 0) return '(no processes)';
      return procs
        .map(
          (p) =>
            `${p.id}\t${describeExit(p)}\t${elapsed(p)}\t${p.output.total} bytes\t${p.command.length > 120 ? `${p.command.slice(0, 120)}…` : p.command}`,
        )
        .join('\n');
    },
  };

  return [bash, bashOutput, stopProcess, listProcesses];
}
