/**
 * The processes one spawned child brings into the world, and how they are ended
 * (docs/design/threat-model.md#process-trees). Used by every transport that starts processes
 * (cli shells, MCP stdio servers).
 *
 * A child is spawned with `detached: true`, so it leads a new process group and a signal to the
 * group reaches grandchildren such as `sleep 1000 &`. A process that leaves the group (`setsid`,
 * a daemon's double fork) is still found on Linux: every process of the tree carries a random
 * marker variable in its environment (`processTreeMarker()`), and at kill time /proc is searched
 * for it, together with the descendants of the leader by parent pid. On other Unix systems only
 * the group is reached; on Windows, where there are no process groups, the tree is killed with
 * `taskkill /T /F`.
 *
 * Where the machine allows, the leader is a PID-namespace wrapper instead (pid-namespace.ts): then the kernel
 * ends the whole tree with the namespace's init, nothing can leave it, and this class only signals the group
 * (`contained`): SIGTERM reaches the command, SIGKILL reaches the init, whose death empties the namespace.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { environValue, lastPid, processStart, readProcTable } from './proc-table.js';
import type { RandomTokens } from './random-tokens.js';

/** Grace period between SIGTERM and SIGKILL, in milliseconds. */
export const KILL_GRACE_MS = 2000;
/** How often a terminating group is probed, so that nothing waits for it once it is gone. */
const GROUP_POLL_MS = 25;
/** How long after spawning a tree its pids are looked for only above the leader's (see #pidRangeHolds). */
const PID_RANGE_MS = 10_000;
/** Name of the environment variable that marks every process of one tree. */
export const TREE_MARKER_NAME = '__UTCP_PROCESS_TREE';

/**
 * A fresh marker for one child: add `{ [name]: value }` to its environment and pass it to `ProcessGroup`. Drawn from
 * `tokens` when the caller keeps a source (random-tokens.ts), else from `randomBytes`.
 */
export function processTreeMarker(tokens?: RandomTokens): { name: string; value: string } {
  return { name: TREE_MARKER_NAME, value: tokens ? tokens.hex(12) : randomBytes(12).toString('hex') };
}

/** Sends `signal` to process group `pgid`; false when the group is gone. */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class ProcessGroup {
  readonly pid: number;
  readonly #platform: NodeJS.Platform;
  readonly #marker: string | undefined;
  readonly #contained: boolean;
  /** The leader's start time (clock ticks since boot), read at construction when the marker scan may run. */
  readonly #leaderStart: number | undefined;
  readonly #createdAt = performance.now();
  #killTimer: NodeJS.Timeout | undefined;
  #terminating = false;

  /**
   * @param pid the leader (spawned with `detached: true` except on Windows)
   * @param marker the value of `TREE_MARKER_NAME` given to the leader's environment, if any
   * @param contained the leader is a PID-namespace wrapper: the tree is its group, and the namespace ends with it
   */
  constructor(pid: number, platform: NodeJS.Platform, marker?: string, contained = false) {
    this.pid = pid;
    this.#platform = platform;
    this.#marker = marker;
    this.#contained = contained;
    // Only processes forked after the leader can carry its marker: older ones need no environment read
    // (the scan read every process's environment, about 2.7 ms per cli call here and more on a busy host).
    this.#leaderStart = platform === 'linux' && marker !== undefined && !contained ? processStart(pid) : undefined;
  }

  get terminating(): boolean {
    return this.#terminating;
  }

  /**
   * True when the leader is a PID-namespace wrapper. Once such a leader has exited, nothing of the tree is left: the
   * wrapper waits for the namespace's init, and the kernel empties the namespace before that init is reaped
   * (docs/design/threat-model.md#pid-namespace). Callers skip the `/proc` scan of {@link isAlive} then.
   */
  get contained(): boolean {
    return this.#contained;
  }

  /**
   * True while some process of the tree exists. A kill(0) probe also counts zombies, which linger as
   * long as their reaper (often PID 1 in a container) takes; on Linux /proc tells them apart.
   */
  isAlive(): boolean {
    if (this.#platform === 'win32') return false;
    if (this.#platform !== 'linux') return signalProcessGroup(this.pid, 0);
    // Contained: the namespace's init is in the group and ends only once the namespace is empty.
    const scan = scanProc(
      this.pid,
      this.#contained ? undefined : this.#marker,
      this.#leaderStart,
      this.#pidRangeHolds(),
    );
    // When /proc cannot tell (unreadable, or it shows no process of the tree at all), trust kill(0).
    if (scan === undefined || scan.seen === 0) return signalProcessGroup(this.pid, 0);
    return scan.live.length > 0;
  }

  /**
   * True while the pids allocated since the leader cannot have gone round `pid_max` and back past it: the tree
   * is young (a full round of 32,768 pids in 10 s would take over 3,000 forks a second).
   */
  #pidRangeHolds(): boolean {
    return this.#leaderStart !== undefined && performance.now() - this.#createdAt < PID_RANGE_MS;
  }

  /** SIGTERM to the whole tree now, SIGKILL after `graceMs` unless it is gone first (probed every 25 ms). */
  terminate(graceMs = KILL_GRACE_MS): void {
    if (this.#terminating) return;
    this.#terminating = true;
    if (this.#platform === 'win32') {
      killWindowsTree(this.pid);
      return;
    }
    this.signal('SIGTERM');
    // Poll rather than wait out the whole grace: the timer keeps the host process alive, so it must
    // stop as soon as the tree is gone (the leader's exit cannot tell, and lingering trees have no
    // exit event at all).
    const killAt = Date.now() + graceMs;
    const check = () => {
      this.#killTimer = undefined;
      if (!this.isAlive()) return;
      const left = killAt - Date.now();
      if (left <= 0) this.signal('SIGKILL');
      else this.#killTimer = setTimeout(check, Math.min(left, GROUP_POLL_MS));
    };
    this.#killTimer = setTimeout(check, Math.min(graceMs, GROUP_POLL_MS));
  }

  /** Called once the leader has exited: cancels the SIGKILL escalation when nothing of the tree is left. */
  settle(): void {
    if (this.#killTimer !== undefined && !this.isAlive()) {
      clearTimeout(this.#killTimer);
      this.#killTimer = undefined;
    }
  }

  /** Sends `signal` to the group and, on Linux, to every process that left it but belongs to the tree. */
  signal(signal: NodeJS.Signals): void {
    if (this.#platform === 'win32') return;
    if (this.#contained) {
      // SIGKILL goes to every member but the wrapper, which then waits for the namespace to be torn down and
      // exits only after it (so its exit means the tree is gone); SIGTERM to the group reaches the command.
      const members =
        signal === 'SIGKILL' ? scanProc(this.pid, undefined, undefined, false)?.live.filter((p) => p !== this.pid) : [];
      if (members === undefined || members.length === 0) signalProcessGroup(this.pid, signal);
      else for (const pid of members) killQuietly(pid, signal);
      return;
    }
    signalProcessGroup(this.pid, signal);
    if (this.#platform !== 'linux') return;
    for (const pid of scanProc(this.pid, this.#marker, this.#leaderStart, this.#pidRangeHolds())?.live ?? []) {
      try {
        process.kill(pid, signal);
      } catch {
        // exited meanwhile
      }
    }
  }
}

function killQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // exited meanwhile
  }
}

function killWindowsTree(pid: number): void {
  try {
    const killer = spawn('taskkill', ['/pid', String(pid), '/T', '/F'], { stdio: 'ignore', windowsHide: true });
    killer.on('error', () => {});
    killer.unref();
  } catch {
    // taskkill unavailable: nothing more we can do.
  }
}

/**
 * Linux: the live (non-zombie) processes of the tree of `leader`: members of its process group,
 * descendants of any member by parent pid, and processes whose environment carries `marker` (only those started
 * no earlier than `leaderStart` are read, when it is known). Undefined when /proc cannot be read.
 */
function scanProc(
  leader: number,
  marker: string | undefined,
  leaderStart: number | undefined,
  pidRangeHolds: boolean,
): { live: number[]; seen: number } | undefined {
  // Every process of the tree was forked after the leader: while pids have not wrapped since, only the pids
  // between the leader's and the last one allocated need reading (a few, against every process of the host).
  const last = pidRangeHolds ? lastPid() : undefined;
  const entries = readProcTable(last !== undefined && last >= leader ? { from: leader, to: last } : undefined);
  if (entries === undefined) return undefined;
  const inTree = new Set<number>();
  for (const e of entries) if (e.pgrp === leader || e.pid === leader) inTree.add(e.pid);
  if (marker !== undefined) {
    for (const e of entries) {
      if (inTree.has(e.pid) || (leaderStart !== undefined && e.start < leaderStart)) continue;
      if (environValue(e.pid, TREE_MARKER_NAME, marker) === marker) inTree.add(e.pid);
    }
  }
  // Descendants by parent pid, to a fixed point.
  for (let grew = true; grew; ) {
    grew = false;
    for (const e of entries) {
      if (!inTree.has(e.pid) && inTree.has(e.ppid)) {
        inTree.add(e.pid);
        grew = true;
      }
    }
  }
  const tree = entries.filter((e) => inTree.has(e.pid));
  return { live: tree.filter((e) => e.live).map((e) => e.pid), seen: tree.length };
}
