/**
 * The kernel sandbox for `bash` (docs/design/code-tools.md#sandbox): bubblewrap gives the command a user namespace
 * with no capabilities, a read-only view of the system, the workspace read-write but its git control files
 * read-only, a private /tmp, its own PID namespace (so every process it starts dies with it), a seccomp filter
 * (docs/design/code-tools.md#seccomp) and, unless the network is allowed, an empty network namespace.
 * The kernel enforces all of it; no command string is inspected here.
 */
import { execFile, spawn, type ChildProcess, type StdioNull, type StdioPipe } from 'node:child_process';
import { access, lstat, mkdir, readFile, realpath, rmdir } from 'node:fs/promises';
import { constants } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { SECCOMP_ARCHES, seccompFilter } from './seccomp.js';
import { errorMessage } from '../internal.js';

export type SandboxMode = 'bwrap' | 'none';

export interface SandboxChoice {
  mode: SandboxMode;
  /** Why `auto` fell back to `none` (bwrap missing, user namespaces forbidden, not Linux). */
  reason?: string;
  bwrapPath?: string;
  /** bwrap supports `--disable-userns` (0.8.0+): the command cannot create nested user namespaces. */
  disableUserns?: boolean;
}

export interface SandboxSpec {
  /** Real path of the workspace (bound read-write). */
  workspace: string;
  /** Extra read-write paths. */
  writable: readonly string[];
  /** Paths inside the read-write ones that are bound read-only over themselves (git control files). */
  readOnly?: readonly string[];
  network: boolean;
  cwd: string;
  /** Pass `--disable-userns`. */
  disableUserns?: boolean;
}

/** The file descriptor bwrap reads the seccomp program from. */
const SECCOMP_FD = 3;

/**
 * bwrap arguments that run `argv` under the sandbox described by `spec`; the seccomp program is expected on fd 3
 * (`spawnSandboxed` provides it).
 */
export function bwrapArgs(spec: SandboxSpec, argv: readonly string[]): string[] {
  // A user namespace with every capability dropped: for a root host too, the kernel refuses mount, umount,
  // setns and the rest (docs/design/code-tools.md#sandbox).
  const args = ['--unshare-user', '--cap-drop', 'ALL'];
  if (spec.disableUserns) args.push('--disable-userns');
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc');
  // Sysctls check only the writer's uid, not a capability: a root host's command (uid 0 in its namespace) could
  // write kernel.core_pattern and have the host run its program as root. /proc/sys stays read-only.
  args.push('--ro-bind', '/proc/sys', '/proc/sys', '--ro-bind-try', '/proc/sysrq-trigger', '/proc/sysrq-trigger');
  args.push('--tmpfs', '/tmp');
  for (const path of [spec.workspace, ...spec.writable]) args.push('--bind', path, path);
  for (const path of spec.readOnly ?? []) args.push('--ro-bind', path, path);
  args.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--die-with-parent');
  if (!spec.network) args.push('--unshare-net');
  args.push('--seccomp', String(SECCOMP_FD), '--chdir', spec.cwd, '--', ...argv);
  return args;
}

/**
 * Starts `argv` under bwrap with the seccomp filter on fd 3 (bwrap reads it, installs it and closes the fd before
 * the command runs). stdin is never connected.
 */
export function spawnSandboxed(
  bwrap: string,
  spec: SandboxSpec,
  argv: readonly string[],
  options: {
    env?: NodeJS.ProcessEnv;
    detached?: boolean;
    stdout: StdioPipe | StdioNull;
    stderr: StdioPipe | StdioNull;
  },
): ChildProcess {
  const filter = seccompFilter();
  if (!filter) throw new Error(`the seccomp filter supports ${SECCOMP_ARCHES.join(' and ')}, not ${process.arch}`);
  const child = spawn(bwrap, bwrapArgs(spec, argv), {
    cwd: spec.cwd,
    env: options.env,
    detached: options.detached,
    stdio: ['ignore', options.stdout, options.stderr, 'pipe'],
  });
  const program = child.stdio[SECCOMP_FD] as Writable | null | undefined;
  // bwrap may exit (or fail to start) before reading it all: that is reported by its exit status.
  program?.on('error', () => undefined);
  program?.end(filter);
  return child;
}

function within(path: string, area: string): boolean {
  return path === area || path.startsWith(area.endsWith('/') ? area : `${area}/`);
}

/** `core.hooksPath` as the host's git reads it for `gitdir` (undefined when unset, or without git). */
function hooksPathOf(gitdir: string): Promise<string | undefined> {
  return new Promise((done) => {
    execFile(
      'git',
      ['--git-dir', gitdir, 'config', '--get', 'core.hooksPath'],
      { timeout: 5000, encoding: 'utf8' },
      (error, stdout) => done(error ? undefined : stdout.trim() || undefined),
    );
  });
}

/**
 * Finds the git control files a sandboxed command could otherwise write: `.git` (directory or file) at the root
 * of the workspace and of every writable path, the directory a `.git` file points to (`gitdir:`) and its
 * `commondir`, and the `core.hooksPath` directory (husky and the like keep hooks in the work tree), when they lie
 * in a writable area (docs/design/code-tools.md#git). A missing `.git` is not listed: the caller creates an empty
 * placeholder in the workspace first. A symbolic-link `.git` cannot be kept in place (the link itself is not a
 * mount point) and is refused, as is a named directory that the command could create or swap.
 */
export async function gitProtection(workspace: string, writable: readonly string[]): Promise<string[]> {
  const areas = [workspace, ...writable];
  const inArea = (path: string) => areas.some((area) => within(path, area));
  const readOnly = new Set<string>();
  /** Protects the path `text` names (relative to `from`); one the command could create or swap is refused. */
  const protect = async (what: string, from: string, text: string): Promise<string | undefined> => {
    const named = resolve(from, text.trim().replace(/^~(?=\/|$)/, homedir()));
    const real = await realpath(named).catch(() => undefined);
    if (real && inArea(real)) readOnly.add(real);
    if (real !== named && inArea(named))
      throw new Error(
        `${what} names ${named}, which ${real ? 'goes through a symbolic link' : 'does not exist'} in a writable directory, so the sandbox cannot keep it read-only`,
      );
    return real;
  };
  for (const area of areas) {
    const dotGit = `${area}/.git`;
    const info = await lstat(dotGit).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (!info) continue;
    if (info.isSymbolicLink())
      throw new Error(
        `${dotGit} is a symbolic link, which the sandbox cannot keep read-only: replace it with the directory (or a "gitdir:" file) it points to`,
      );
    readOnly.add(dotGit);
    let gitdir: string | undefined = dotGit;
    if (info.isFile()) {
      // A gitdir file (worktrees, submodules): the directory it names holds the hooks, and its commondir the config.
      const match = /^gitdir:\s*(.+)$/m.exec(await readFile(dotGit, 'utf8').catch(() => ''));
      gitdir = match ? await protect(dotGit, dirname(dotGit), match[1]) : undefined;
      const common = gitdir && (await readFile(`${gitdir}/commondir`, 'utf8').catch(() => undefined));
      if (gitdir && common) await protect(`${gitdir}/commondir`, gitdir, common);
    } else if (!info.isDirectory()) continue;
    // Hooks run from core.hooksPath when it is set, relative to the work tree (the area).
    const hooks = gitdir && (await hooksPathOf(gitdir));
    if (hooks) await protect(`core.hooksPath of ${gitdir}`, area, hooks);
  }
  return [...readOnly];
}

/**
 * The empty `<root>/.git` made while sandboxed commands run in a workspace that has none (docs/design/code-tools.md#git),
 * so no command can create one. Counted per live command; removed when the last one ends. A new placeholder waits
 * for the removal of the last one: removing a directory another sandbox has mounted would unmount it there.
 */
export class GitPlaceholder {
  readonly path: string;
  #holders = 0;
  #made: Promise<boolean> | undefined;
  #gone: Promise<void> = Promise.resolve();

  constructor(path: string) {
    this.path = path;
  }

  /** True when the placeholder is there for the caller (then `release()` it); false when a `.git` exists. */
  async hold(): Promise<boolean> {
    this.#holders++;
    // mkdir fails when a .git exists (protected as such) or the root is not writable (nor is it for the command).
    this.#made ??= this.#gone.then(() =>
      mkdir(this.path, { mode: 0o755 }).then(
        () => true,
        () => false,
      ),
    );
    if (await this.#made) return true;
    if (--this.#holders === 0) this.#made = undefined;
    return false;
  }

  async release(): Promise<void> {
    if (--this.#holders > 0) return;
    this.#made = undefined;
    // Not empty: someone on the host made it a repository meanwhile, and it stays.
    this.#gone = rmdir(this.path).catch(() => undefined);
    await this.#gone;
  }
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

/**
 * Runs one sandboxed `true` with the arguments every command gets (user namespace, no capabilities, seccomp) to
 * see whether bwrap works here (user namespaces may be forbidden).
 */
function probe(bwrap: string, workspace: string, shell: string, disableUserns: boolean): Promise<string | undefined> {
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawnSandboxed(
        bwrap,
        { workspace, writable: [], network: false, cwd: workspace, disableUserns },
        [shell, '-c', 'true'],
        { stdout: 'ignore', stderr: 'pipe' },
      );
    } catch (error) {
      resolve(errorMessage(error));
      return;
    }
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-500)));
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
  let disableUserns = true;
  if (process.platform !== 'linux') reason = `bubblewrap needs Linux (this is ${process.platform})`;
  else if (!seccompFilter())
    reason = `the sandbox's seccomp filter supports ${SECCOMP_ARCHES.join(' and ')}, not ${process.arch}`;
  else {
    bin = bwrapPath ?? (await findOnPath('bwrap', process.env.PATH));
    if (!bin) reason = 'bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)';
    else {
      // --disable-userns needs bwrap 0.8.0 (and a kernel that lets it cap user namespaces); without it the sandbox
      // holds as well (nested namespaces get no capability over the sandbox's locked mounts), it only leaves the
      // kernel's user-namespace code reachable. So a failure is retried without it.
      let failure = await probe(bin, workspace, shell, true);
      if (failure) {
        disableUserns = false;
        failure = await probe(bin, workspace, shell, false);
      }
      if (failure) reason = `bwrap does not work here (user namespaces may be forbidden): ${failure}`;
    }
  }
  if (!reason) return { mode: 'bwrap', bwrapPath: bin, disableUserns };
  if (requested === 'bwrap') throw new Error(`sandbox 'bwrap' is not available: ${reason}`);
  return { mode: 'none', reason };
}
