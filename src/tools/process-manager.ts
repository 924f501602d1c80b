/**
 * The process manager behind `bash` (docs/design/code-tools.md#processes). Every command runs in its own process
 * group (under bubblewrap when the sandbox is on); stopping sends SIGTERM to the whole group (and to processes
 * that left it but carry the command's marker variable), then SIGKILL after a grace period; `stopAll()` (run by
 * `client.close()`) stops every process still alive. Process groups, the /proc scan and the child environment
 * are the library's own (src/process, through `utcp-kit/internal`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { environValue, readProcTable, settledWithin, signalProcessGroup, sleep } from '../internal.js';
import type { CodeToolsContext } from './context.js';
import { OutputBuffer } from './output-buffer.js';
import type { PolicyRule } from './policy.js';
import { GitPlaceholder, gitProtection, spawnSandboxed, type SandboxChoice } from './sandbox.js';

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
export function scanProcesses(variable: string, prefix: string): ProcessScan | undefined {
  if (process.platform !== 'linux') return undefined;
  const entries = readProcTable();
  if (!entries) return undefined;
  const scan: ProcessScan = { groups: new Map(), bwrap: new Set(), marked: new Map() };
  for (const e of entries) {
    if (!e.live) continue;
    if (e.comm === 'bwrap') scan.bwrap.add(e.pid);
    scan.groups.set(e.pgrp, [...(scan.groups.get(e.pgrp) ?? []), e.pid]);
    const value = environValue(e.pid, variable, prefix);
    if (value !== undefined) scan.marked.set(value, [...(scan.marked.get(value) ?? []), e.pid]);
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

/** Signals the process group led by `pid` (false when there is none). */
function groupKill(pid: number | undefined, signal: NodeJS.Signals | 0): boolean {
  return pid !== undefined && signalProcessGroup(pid, signal);
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
    await settledWithin(proc.done, graceMs);
    // Members that outlived the leader, or left the group, get the rest of the grace period.
    for (;;) {
      live = await this.#live(proc);
      if ((!live.group && live.marked.length === 0) || Date.now() >= deadline) break;
      await sleep(25);
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
