import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Grace period between SIGTERM and SIGKILL, in milliseconds. */
export const KILL_GRACE_MS = 2000;
/** How often a terminating group is probed, so that nothing waits for it once it is gone. */
const GROUP_POLL_MS = 25;

/**
 * The process group of one spawned shell (the shell is its leader, spawned with `detached: true`),
 * so that grandchildren such as `sleep 1000 &` are signalled with it. On Windows, where there are
 * no process groups, the tree is killed with `taskkill /T /F`.
 */
export class ProcessGroup {
  readonly pid: number;
  readonly #platform: NodeJS.Platform;
  #killTimer: NodeJS.Timeout | undefined;
  #terminating = false;

  constructor(pid: number, platform: NodeJS.Platform) {
    this.pid = pid;
    this.#platform = platform;
  }

  get terminating(): boolean {
    return this.#terminating;
  }

  /**
   * True while some process of the group exists. A kill(0) probe also counts zombies, which linger as
   * long as their reaper (often PID 1 in a container) takes; on Linux /proc tells them apart.
   */
  isAlive(): boolean {
    if (this.#platform === 'win32') return false;
    try {
      process.kill(-this.pid, 0);
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
    return this.#platform !== 'linux' || hasLiveMember(this.pid);
  }

  /** SIGTERM to the whole group now, SIGKILL after `graceMs` unless the group is gone first (probed every 25 ms). */
  terminate(graceMs = KILL_GRACE_MS): void {
    if (this.#terminating) return;
    this.#terminating = true;
    if (this.#platform === 'win32') {
      killWindowsTree(this.pid);
      return;
    }
    this.#signal('SIGTERM');
    // Poll rather than wait out the whole grace: the timer keeps the host process alive, so it must
    // stop as soon as the group is gone (the leader's exit cannot tell, and lingering groups have no
    // exit event at all).
    const killAt = Date.now() + graceMs;
    const check = () => {
      this.#killTimer = undefined;
      if (!this.isAlive()) return;
      const left = killAt - Date.now();
      if (left <= 0) this.#signal('SIGKILL');
      else this.#killTimer = setTimeout(check, Math.min(left, GROUP_POLL_MS));
    };
    this.#killTimer = setTimeout(check, Math.min(graceMs, GROUP_POLL_MS));
  }

  /** Called once the leader has exited: cancels the SIGKILL escalation when nothing of the group is left. */
  settle(): void {
    if (this.#killTimer !== undefined && !this.isAlive()) {
      clearTimeout(this.#killTimer);
      this.#killTimer = undefined;
    }
  }

  #signal(signal: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, signal);
    } catch {
      // ESRCH: the group is already gone.
    }
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
 * Linux: whether group `pgid` has a member that is not a zombie, from /proc/<pid>/stat.
 * When /proc cannot tell (unreadable, or it shows no member at all), trusts the kill(0) probe: true.
 */
function hasLiveMember(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return true;
  }
  let members = 0;
  for (const name of entries) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue; // exited meanwhile
    }
    // "<pid> (<comm>) <state> <ppid> <pgrp> ...": comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) !== pgid) continue;
    members++;
    if (fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return members === 0;
}
