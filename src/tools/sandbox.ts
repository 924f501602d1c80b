/**
 * The kernel sandbox for `bash` (docs/design/code-tools.md#sandbox): bubblewrap gives the command a
 * read-only view of the system, the workspace read-write, a private /tmp, its own PID namespace (so every
 * process it starts dies with it) and, unless the network is allowed, an empty network namespace.
 * The kernel enforces all of it; no command string is inspected here.
 */
import { spawn } from 'node:child_process';
import { access } from 'node:fs/promises';
import { constants } from 'node:fs';

export type SandboxMode = 'bwrap' | 'none';

export interface SandboxChoice {
  mode: SandboxMode;
  /** Why `auto` fell back to `none` (bwrap missing, user namespaces forbidden, not Linux). */
  reason?: string;
  bwrapPath?: string;
}

export interface SandboxSpec {
  /** Real path of the workspace (bound read-write). */
  workspace: string;
  /** Extra read-write paths. */
  writable: readonly string[];
  network: boolean;
  cwd: string;
}

/** bwrap arguments that run `argv` under the sandbox described by `spec`. */
export function bwrapArgs(spec: SandboxSpec, argv: readonly string[]): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  for (const path of [spec.workspace, ...spec.writable]) args.push('--bind', path, path);
  args.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--die-with-parent');
  if (!spec.network) args.push('--unshare-net');
  args.push('--chdir', spec.cwd, '--', ...argv);
  return args;
}

async function findOnPath(name: string, pathVar: string | undefined): Promise<string | undefined> {
  for (const dir of (pathVar ?? '/usr/local/bin:/usr/bin:/bin').split(':')) {
    if (!dir) continue;
    const candidate = `${dir}/${name}`;
    if (
      await access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  return undefined;
}

/** Runs one sandboxed `true` to see whether bwrap works here (user namespaces may be forbidden). */
function probe(bwrap: string, workspace: string, shell: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(
      bwrap,
      bwrapArgs({ workspace, writable: [], network: false, cwd: workspace }, [shell, '-c', 'true']),
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-500)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('error', (e) => {
      clearTimeout(timer);
      resolve(e.message);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? undefined : stderr.trim() || `bwrap exited with status ${code}`);
    });
  });
}

/** Picks the sandbox for `requested`; throws when `bwrap` was required and does not work. */
export async function chooseSandbox(
  requested: 'auto' | 'bwrap' | 'none',
  workspace: string,
  shell: string,
  bwrapPath?: string,
): Promise<SandboxChoice> {
  if (requested === 'none') return { mode: 'none', reason: 'sandbox: none was requested' };
  let reason: string | undefined;
  let bin: string | undefined;
  if (process.platform !== 'linux') reason = `bubblewrap needs Linux (this is ${process.platform})`;
  else {
    bin = bwrapPath ?? (await findOnPath('bwrap', process.env.PATH));
    if (!bin) reason = 'bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)';
    else {
      const failure = await probe(bin, workspace, shell);
      if (failure) reason = `bwrap does not work here (user namespaces may be forbidden): ${failure}`;
    }
  }
  if (!reason) return { mode: 'bwrap', bwrapPath: bin };
  if (requested === 'bwrap') throw new Error(`sandbox 'bwrap' is not available: ${reason}`);
  return { mode: 'none', reason };
}
