/**
 * `bash` and its process manager (docs/design/code-tools.md#processes). Every command runs in its own
 * process group (under bubblewrap when the sandbox is on); stdout and stderr go to one ring buffer read with
 * a cursor; stopping sends SIGTERM to the whole group, then SIGKILL after a grace period; `stopAll()` (run by
 * `client.close()`) stops every process still alive.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { DirectFunction } from '../index.js';
import { boolArg, intArg, optionalString, stringArg, type CodeToolsContext } from './context.js';
import { policyViolation, type PolicyRule } from './policy.js';
import { untrustedPattern, waitMatcher } from './regex.js';
import { GitPlaceholder, gitProtection, spawnSandboxed, type SandboxChoice } from './sandbox.js';

/**
 * Output kept for one process: the first `headBytes` bytes, and the last `capacity` bytes (a ring held as a list of
 * chunks, so memory follows the output actually written).
 */
export class OutputBuffer {
  readonly #capacity: number;
  readonly #headBytes: number;
  #chunks: Buffer[] = [];
  #held = 0;
  #total = 0; // bytes written so far; the chunks hold [total - held, total)
  #head: Buffer[] = [];
  #headLength = 0;

  constructor(capacity: number, headBytes: number) {
    this.#capacity = Math.max(1, capacity);
    this.#headBytes = headBytes;
  }

  get total(): number {
    return this.#total;
  }

  get #start(): number {
    return this.#total - this.#held;
  }

  write(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (this.#headLength < this.#headBytes) {
      const part = chunk.subarray(0, this.#headBytes - this.#headLength);
      this.#head.push(Buffer.from(part));
      this.#headLength += part.length;
    }
    this.#chunks.push(chunk);
    this.#held += chunk.length;
    this.#total += chunk.length;
    while (this.#held - this.#chunks[0].length >= this.#capacity) this.#held -= this.#chunks.shift()!.length;
    const excess = this.#held - this.#capacity;
    if (excess > 0) {
      this.#chunks[0] = Buffer.from(this.#chunks[0].subarray(excess));
      this.#held -= excess;
    }
  }

  /** Copies absolute range [from, to) out of the held chunks (it must be held). */
  #copy(from: number, to: number): Buffer {
    const out = Buffer.allocUnsafe(Math.max(0, to - from));
    let at = this.#start;
    let written = 0;
    for (const c of this.#chunks) {
      const cStart = at;
      const cEnd = at + c.length;
      at = cEnd;
      if (cEnd <= from) continue;
      if (cStart >= to) break;
      const a = Math.max(from, cStart) - cStart;
      const b = Math.min(to, cEnd) - cStart;
      c.copy(out, written, a, b);
      written += b - a;
    }
    return out.subarray(0, written);
  }

  /** Bytes from absolute offset `cursor`, at most `max`; `dropped` counts bytes lost to the ring before it. */
  read(cursor: number, max: number): { text: string; next: number; dropped: number } {
    const from = Math.min(Math.max(cursor, this.#start), this.#total);
    const dropped = Math.max(0, from - cursor);
    const to = Math.min(this.#total, from + max);
    const slice = this.#copy(from, to);
    // Never split a UTF-8 sequence: stop before a cut one.
    let end = slice.length;
    if (to < this.#total) {
      let i = end - 1;
      let cont = 0;
      while (i >= 0 && cont < 3 && (slice[i] & 0xc0) === 0x80) {
        i--;
        cont++;
      }
      if (i >= 0 && slice[i] >= 0xc0) {
        const need = slice[i] >= 0xf0 ? 4 : slice[i] >= 0xe0 ? 3 : 2;
        if (cont + 1 < need && i > 0) end = i;
      }
    }
    return { text: slice.subarray(0, end).toString('utf8'), next: from + end, dropped };
  }

  /** The whole output when it fits in `max` bytes, else its head and tail with the gap announced. */
  headAndTail(max: number): string {
    if (this.#total <= max) return this.#copy(0, this.#total).toString('utf8');
    const half = Math.floor(max / 2);
    const head = Buffer.concat(this.#head)
      .subarray(0, half)
      .toString('utf8')
      .replace(/\uFFFD$/, '');
    const tail = this.#copy(this.#total - Math.min(half, this.#held), this.#total)
      .toString('utf8')
      .replace(/^\uFFFD/, '');
    const omitted = this.#total - Buffer.byteLength(head) - Buffer.byteLength(tail);
    return `${head}\n… [${omitted} bytes omitted] …\n${tail}`;
  }
}

export interface ManagedProcess {
  id: number;
  command: string;
  pid: number | undefined;
  startedAt: number;
  output: OutputBuffer;
  /** The cursor `bash_output` continues from when none is given. */
  readCursor: number;
  exitCode: number | null | undefined;
  exitSignal: NodeJS.Signals | null | undefined;
  /** Resolves when the process has exited and its output is closed. */
  done: Promise<void>;
  finished: boolean;
  stoppedBy?: string;
  child: ChildProcess;
}

export interface ProcessOptions {
  shell: string;
  sandbox: SandboxChoice;
  /** Extra read-write paths in the sandbox. */
  writable: readonly string[];
  network: boolean;
  env: NodeJS.ProcessEnv;
  killGraceMs: number;
  policy: readonly PolicyRule[];
  /** Longest foreground wait a call may ask for, and the default. */
  maxTimeoutMs: number;
  defaultTimeoutMs: number;
  /** Most processes alive at once. */
  maxProcesses: number;
  /** Unique per tool set: every process gets `UTCP_CODE_TOOLS_PROCESS=<marker>-<id>` so escapees are found. */
  marker: string;
}

export interface ProcessScan {
  /** Live (not zombie) members of each process group. */
  groups: Map<number, number[]>;
  /** Pids of bubblewrap processes (the outer one and the PID namespace's init). */
  bwrap: Set<number>;
  /** Live pids by the value of their marker variable. */
  marked: Map<string, number[]>;
}

/**
 * One pass over the live processes (zombies excluded): their process groups, and the pids whose environment
 * carries `variable=<prefix>...` (children that left the group). Linux reads /proc; elsewhere returns
 * undefined and callers probe the group with signal 0.
 */
export async function scanProcesses(variable: string, prefix: string): Promise<ProcessScan | undefined> {
  if (process.platform !== 'linux') return undefined;
  // Synchronous on purpose: /proc reads are memory-backed, and a few hundred of them take milliseconds in one
  // go, against tens of milliseconds queued one by one on the thread pool.
  const { readdirSync, readFileSync } = await import('node:fs');
  const read = (path: string): Buffer | undefined => {
    try {
      return readFileSync(path);
    } catch {
      return undefined;
    }
  };
  const needle = Buffer.from(`\0${variable}=${prefix}`);
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const scan: ProcessScan = { groups: new Map(), bwrap: new Set(), marked: new Map() };
  for (const name of entries) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const stat = read(`/proc/${name}/stat`)?.toString('latin1');
    if (!stat) continue;
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') continue;
    const pgrp = Number(fields[2]);
    if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === 'bwrap') scan.bwrap.add(Number(name));
    scan.groups.set(pgrp, [...(scan.groups.get(pgrp) ?? []), Number(name)]);
    const env = read(`/proc/${name}/environ`);
    if (!env) continue;
    const padded = Buffer.concat([Buffer.from([0]), env]);
    const at = padded.indexOf(needle);
    if (at < 0) continue;
    const start = at + 1 + variable.length + 1;
    const end = padded.indexOf(0, start);
    const value = padded.subarray(start, end < 0 ? undefined : end).toString();
    scan.marked.set(value, [...(scan.marked.get(value) ?? []), Number(name)]);
  }
  return scan;
}

function killPids(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

export const MARKER_VARIABLE = 'UTCP_CODE_TOOLS_PROCESS';

/** Finished processes kept for bash_output and list_processes. */
const MAX_FINISHED_KEPT = 32;

function groupKill(pid: number | undefined, signal: NodeJS.Signals | 0): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

export class ProcessManager {
  readonly #ctx: CodeToolsContext;
  readonly #opts: ProcessOptions;
  readonly #procs = new Map<number, ManagedProcess>();
  #nextId = 1;
  #closed = false;

  constructor(ctx: CodeToolsContext, opts: ProcessOptions) {
    this.#ctx = ctx;
    this.#opts = opts;
  }

  /** The placeholder `<root>/.git` of this manager's workspace, made when first needed. */
  #placeholder: GitPlaceholder | undefined;

  get sandboxLabel(): string {
    const s = this.#opts.sandbox;
    if (s.mode === 'bwrap')
      return `bwrap (workspace read-write but its .git read-only, system read-only, ${this.#opts.network ? 'network allowed' : 'no network'})`;
    return 'none (commands run with the full rights of the host user)';
  }

  get(id: unknown): ManagedProcess {
    if (typeof id !== 'number' || !Number.isInteger(id))
      throw new Error('id must be the integer process id that bash returned');
    const p = this.#procs.get(id);
    if (!p) throw new Error(`no process ${id}; list_processes shows the known ones`);
    return p;
  }

  list(): ManagedProcess[] {
    return [...this.#procs.values()];
  }

  async start(command: string, cwd: string, rootReal: string): Promise<ManagedProcess> {
    if (this.#closed) throw new Error('the code tools are closed');
    const alive = this.list().filter((p) => !p.finished).length;
    if (alive >= this.#opts.maxProcesses)
      throw new Error(`${alive} processes are already running (the limit); stop one with stop_process`);
    const argv = [this.#opts.shell, '-c', command];
    const sandbox = this.#opts.sandbox;
    const id = this.#nextId++;
    const env = { ...this.#opts.env, [MARKER_VARIABLE]: `${this.#opts.marker}-${id}` };
    let child: ChildProcess;
    let placeholder: GitPlaceholder | undefined;
    if (sandbox.mode === 'bwrap') {
      // The workspace's git control files are read-only inside (docs/design/code-tools.md#git); a missing
      // <root>/.git gets an empty placeholder, removed when the last command using it ends.
      this.#placeholder ??= new GitPlaceholder(`${rootReal}/.git`);
      if (await this.#placeholder.hold()) placeholder = this.#placeholder;
      try {
        const readOnly = await gitProtection(rootReal, this.#opts.writable);
        const spec = {
          workspace: rootReal,
          writable: this.#opts.writable,
          readOnly,
          network: this.#opts.network,
          cwd,
          disableUserns: sandbox.disableUserns,
        };
        child = spawnSandboxed(sandbox.bwrapPath!, spec, argv, { env, detached: true, stdout: 'pipe', stderr: 'pipe' });
      } catch (error) {
        await placeholder?.release();
        throw error;
      }
    } else {
      child = spawn(argv[0], argv.slice(1), { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    }
    const output = new OutputBuffer(
      this.#ctx.limits.processBufferBytes,
      Math.ceil(this.#ctx.limits.inlineOutputBytes / 2),
    );
    const proc: ManagedProcess = {
      id,
      command,
      pid: child.pid,
      startedAt: Date.now(),
      output,
      readCursor: 0,
      exitCode: undefined,
      exitSignal: undefined,
      done: Promise.resolve(),
      finished: false,
      child,
    };
    child.stdout!.on('data', (d: Buffer) => output.write(d));
    child.stderr!.on('data', (d: Buffer) => output.write(d));
    proc.done = new Promise<void>((resolve) => {
      child.once('error', (error) => {
        output.write(Buffer.from(`failed to start: ${error.message}\n`));
        proc.exitCode = proc.exitCode ?? 127;
        proc.finished = true;
        resolve();
      });
      child.once('exit', (code, signal) => {
        proc.exitCode = code;
        proc.exitSignal = signal;
      });
      child.once('close', (code, signal) => {
        if (proc.exitCode === undefined) {
          proc.exitCode = code;
          proc.exitSignal = signal;
        }
        proc.finished = true;
        resolve();
      });
    });
    // The placeholder is gone by the time `done` resolves (so after stop() and close()).
    if (placeholder) proc.done = proc.done.then(() => placeholder.release());
    this.#procs.set(id, proc);
    // Keep the table bounded: the oldest finished processes (and their output) are forgotten first.
    const finished = this.list().filter((p) => p.finished);
    for (const p of finished.slice(0, Math.max(0, finished.length - MAX_FINISHED_KEPT))) this.#procs.delete(p.id);
    return proc;
  }

  /**
   * SIGTERM to the whole group (and to processes that left it but carry its marker), SIGKILL after the grace
   * period; resolves once the process and its marked descendants are gone.
   */
  async #live(
    proc: ManagedProcess,
    scan?: ProcessScan,
  ): Promise<{ group: boolean; members: number[] | undefined; marked: number[] }> {
    scan ??= await scanProcesses(MARKER_VARIABLE, `${this.#opts.marker}-`);
    if (!scan) return { group: groupKill(proc.pid, 0), members: undefined, marked: [] };
    const members =
      proc.pid === undefined ? [] : (scan.groups.get(proc.pid) ?? []).filter((pid) => !scan.bwrap.has(pid));
    const marked = (scan.marked.get(`${this.#opts.marker}-${proc.id}`) ?? []).filter((pid) => !scan.bwrap.has(pid));
    return { group: members.length > 0, members, marked };
  }

  /**
   * SIGTERM to the whole group (and to processes that left it but carry its marker), SIGKILL after the grace
   * period; resolves once the process and its marked descendants are gone.
   */
  async stop(proc: ManagedProcess, graceMs = this.#opts.killGraceMs, scan?: ProcessScan): Promise<string> {
    let live = await this.#live(proc, scan);
    if (proc.finished && !live.group && live.marked.length === 0)
      return `process ${proc.id} had already exited (${describeExit(proc)})`;
    if (!proc.finished) proc.stoppedBy ??= 'SIGTERM';
    if (this.#opts.sandbox.mode === 'bwrap' && live.members) {
      // bwrap (outer process and namespace init) dies on SIGTERM and takes the PID namespace down at once: the
      // command and its children get the SIGTERM and the grace period; bwrap gets SIGKILL only if they outlive it.
      killPids([...live.members, ...live.marked], 'SIGTERM');
      // Nothing of the command runs yet (stopped right after the start, bwrap still setting up): SIGKILL to the
      // group, since the namespace's init ignores SIGTERM from outside and may not have its parent-death signal
      // yet; a command that never ran is owed no grace period.
      if (live.members.length === 0 && !proc.finished) {
        proc.stoppedBy = 'SIGKILL before the command started';
        groupKill(proc.pid, 'SIGKILL');
      }
    } else {
      groupKill(proc.pid, 'SIGTERM');
      killPids(live.marked, 'SIGTERM');
    }
    const deadline = Date.now() + graceMs;
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), graceMs)));
    await Promise.race([proc.done, graceOver]);
    clearTimeout(timer);
    // Members that outlived the leader, or left the group, get the rest of the grace period.
    for (;;) {
      live = await this.#live(proc);
      if ((!live.group && live.marked.length === 0) || Date.now() >= deadline) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    if (!proc.finished || live.group || live.marked.length > 0) {
      if (!proc.finished) proc.stoppedBy = `SIGKILL after ${graceMs} ms`;
      groupKill(proc.pid, 'SIGKILL');
      killPids(live.marked, 'SIGKILL');
      await proc.done;
    }
    return `stopped process ${proc.id} (${proc.stoppedBy ?? 'its leftover processes'})`;
  }

  /** Stops every process (run by client.close()). */
  async stopAll(): Promise<void> {
    this.#closed = true;
    const scan = await scanProcesses(MARKER_VARIABLE, `${this.#opts.marker}-`);
    await Promise.all(this.list().map((p) => this.stop(p, this.#opts.killGraceMs, scan).catch(() => undefined)));
    // Leftovers of commands no longer in the table (forgotten finished ones) still carry the marker.
    const rest = await scanProcesses(MARKER_VARIABLE, `${this.#opts.marker}-`);
    if (rest)
      killPids(
        [...rest.marked.values()].flat().filter((pid) => !rest.bwrap.has(pid)),
        'SIGKILL',
      );
  }
}

export function describeExit(p: ManagedProcess): string {
  if (!p.finished && p.exitCode === undefined) return 'running';
  if (p.stoppedBy) return `stopped with ${p.stoppedBy}`;
  if (p.exitSignal) return `killed by ${p.exitSignal}`;
  return `exit code ${p.exitCode}`;
}

function elapsed(p: ManagedProcess): string {
  const ms = Date.now() - p.startedAt;
  return ms < 10_000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}

/** Waits until the process finishes, `signal` aborts, or `ms` pass. */
function waitFor(
  p: ManagedProcess,
  ms: number,
  signal: AbortSignal,
  until?: () => boolean,
): Promise<'done' | 'timeout' | 'matched'> {
  return new Promise((resolve, reject) => {
    if (p.finished) return resolve('done');
    if (until?.()) return resolve('matched');
    const onData = () => {
      if (until?.()) finish('matched');
    };
    const finish = (v: 'done' | 'timeout' | 'matched') => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      p.child.stdout?.off('data', onData);
      p.child.stderr?.off('data', onData);
      resolve(v);
    };
    const onAbort = () => {
      clearTimeout(timer);
      p.child.stdout?.off('data', onData);
      p.child.stderr?.off('data', onData);
      reject(signal.reason);
    };
    const timer = setTimeout(() => finish('timeout'), ms);
    if (until) {
      // Listeners added after the buffer's own, so the buffer already holds the chunk.
      p.child.stdout?.on('data', onData);
      p.child.stderr?.on('data', onData);
    }
    signal.addEventListener('abort', onAbort, { once: true });
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
