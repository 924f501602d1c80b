import { spawn } from 'node:child_process';

/** Grace period between SIGTERM and SIGKILL, in milliseconds. */
export const KILL_GRACE_MS = 2000;

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

  /** True while some process of the group exists (zombies included; a kill(0) probe cannot tell them apart). */
  isAlive(): boolean {
    if (this.#platform === 'win32') return false;
    try {
      process.kill(-this.pid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  }

  /** SIGTERM to the whole group now, SIGKILL after `graceMs` unless `settle()` saw the group gone first. */
  terminate(graceMs = KILL_GRACE_MS): void {
    if (this.#terminating) return;
    this.#terminating = true;
    if (this.#platform === 'win32') {
      killWindowsTree(this.pid);
      return;
    }
    this.#signal('SIGTERM');
    this.#killTimer = setTimeout(() => {
      this.#killTimer = undefined;
      this.#signal('SIGKILL');
    }, graceMs);
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
