/**
 * Kernel containment of a child's process tree (docs/design/threat-model.md#process-namespaces,
 * docs/design/transports.md#process-containment): on Linux, when the
 * machine allows it, a cli shell or an MCP stdio server is started inside a new PID namespace whose init is a
 * tiny `/bin/sh` that runs the command in the foreground and waits for it (a cli shell is the init itself under
 * unshare: WrapOptions.commandAsInit). When that init exits (the command
 * ended) or is killed (SIGKILL from us, or the wrapper's parent-death signal), the kernel kills every process
 * left in the namespace: a grandchild that called `setsid`, double-forked and unset every variable we gave it
 * is still in the namespace, and nothing it can do takes it out.
 *
 * Wrappers, tried once per process in this order (the first whose probe runs a command and passes its exit
 * status through wins; the answer is a property of the machine and user, so it is the one thing cached per
 * process rather than per client):
 * - `unshare --pid --fork --kill-child --mount-proc` (util-linux; as root, or with CAP_SYS_ADMIN);
 * - the same with `--user --map-current-user` (any user, where unprivileged user namespaces are allowed);
 * - `bwrap --dev-bind / / --unshare-pid --proc /proc --die-with-parent` (bubblewrap, setuid or user-namespace based).
 * None works (not Linux, no tool, namespaces forbidden): the caller falls back to the process group and the
 * marker scan of process-group.ts, and says so once per client through the logger.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { TransportContext } from '../core/transport.js';

const signals = osConstants.signals as unknown as Record<string, number>;

/** How one wrapper starts a command inside its own PID namespace. */
export interface PidNamespace {
  /** The wrapper, for diagnostics: `unshare`, `unshare --user` or `bwrap`. */
  readonly tool: string;
  /** True when `wrap` honours {@link WrapOptions.commandAsInit} (unshare); bwrap always has its own init. */
  readonly commandCanBeInit: boolean;
  /**
   * argv that starts `file args` as the only child of the namespace's init (`file` must be absolute); `env` is the
   * environment the child is spawned with, which reaches the command unchanged.
   */
  wrap(
    file: string,
    args: readonly string[],
    env: Readonly<Record<string, string>>,
    options?: WrapOptions,
  ): { file: string; args: string[]; commandIsInit: boolean };
}

export interface WrapOptions {
  /**
   * Run the command itself as the namespace's init (PID 1) where the wrapper allows, without the `/bin/sh` init
   * between: one exec and one fork fewer, about 3 ms per spawn here (docs/design/transports.md#cli-fast-path). The
   * command must then live with PID 1's signal rules: a signal it has no handler for is ignored unless it is
   * SIGKILL from outside, and the namespace ends when it exits. `commandIsInit` in the result says whether it is.
   */
  commandAsInit?: boolean;
}

/**
 * The init: runs the command in the FOREGROUND (an asynchronous list would get /dev/null as stdin and
 * SIGINT/SIGQUIT ignored) and exits with its status. As PID 1 it ignores signals it has no handler for, so a
 * SIGTERM to the process group reaches the command (PID 2, ordinary semantics) and init waits; `exit $?` keeps
 * `sh` from replacing itself with the command.
 */
const INIT_SCRIPT = '"$@"; exit $?';
/** The same for an environment without PWD, which `sh` would otherwise add. */
const INIT_SCRIPT_NO_PWD = `unset PWD; ${INIT_SCRIPT}`;
const SHELL = '/bin/sh';
/** Bound on one probe run. */
const PROBE_TIMEOUT_MS = 5_000;
/** The exit status the probe's command returns, to check that the wrapper passes it through. */
const PROBE_STATUS = 42;

let detected: Promise<PidNamespace | undefined> | undefined;

/**
 * The wrapper for the children of one client: undefined when the client opted out (`pidNamespaces: false`) or
 * when the machine allows none, in which case a warning naming the weaker containment is logged once per client.
 */
export async function clientPidNamespace(ctx: TransportContext): Promise<PidNamespace | undefined> {
  if (ctx.pidNamespaces === false || process.platform === 'win32') return undefined;
  const found = await pidNamespace();
  if (found === undefined) {
    ctx.shared('process.pid-namespace.warned', () => {
      ctx.logger.warn?.(
        'Child processes (cli tools, MCP stdio servers) run without a PID namespace: neither unshare nor bwrap can ' +
          'create one here. Their process trees are contained by process group and environment marker only, which a ' +
          'process that leaves the group and unsets the marker escapes.',
        { platform: process.platform },
      );
      return true;
    });
  }
  return found;
}

/**
 * The PID-namespace wrapper this machine allows, probed once per process (a few ms, once); undefined where none
 * works. Never rejects.
 */
export function pidNamespace(): Promise<PidNamespace | undefined> {
  if (process.platform !== 'linux') return Promise.resolve(undefined);
  detected ??= detect().catch(() => undefined);
  return detected;
}

async function detect(): Promise<PidNamespace | undefined> {
  const path = process.env.PATH ?? '/usr/bin:/bin';
  const unshare = findExecutable('unshare', path, '/');
  const candidates: PidNamespace[] = [];
  if (unshare !== undefined && executable(SHELL)) {
    // A /proc of the namespace's own (in a mount namespace that receives the host's later mounts but sends none
    // back), so that pids the tree sees (`$!`, `$$`) and /proc agree, and /proc/self stays right.
    const pidOnly = ['--pid', '--fork', '--kill-child', '--mount-proc', '--propagation', 'slave'];
    const viaInit = (tool: string, flags: string[]): PidNamespace => ({
      tool,
      commandCanBeInit: true,
      wrap: (file, args, env, options) =>
        options?.commandAsInit === true
          ? { file: unshare, args: [...flags, file, ...args], commandIsInit: true }
          : {
              file: unshare,
              args: [...flags, SHELL, '-c', 'PWD' in env ? INIT_SCRIPT : INIT_SCRIPT_NO_PWD, 'sh', file, ...args],
              commandIsInit: false,
            },
    });
    if (process.geteuid?.() === 0) candidates.push(viaInit('unshare', pidOnly));
    candidates.push(viaInit('unshare --user', ['--user', '--map-current-user', ...pidOnly]));
  }
  const bwrap = findExecutable('bwrap', path, '/');
  if (bwrap !== undefined) {
    // bwrap's own init is PID 1 and exits with the command's status; --die-with-parent ends the sandbox when
    // bwrap itself is killed.
    const flags = ['--dev-bind', '/', '/', '--unshare-pid', '--proc', '/proc', '--die-with-parent', '--'];
    candidates.push({
      tool: 'bwrap',
      commandCanBeInit: false,
      wrap: (file, args) => ({ file: bwrap, args: [...flags, file, ...args], commandIsInit: false }),
    });
  }
  for (const candidate of candidates) if (await works(candidate)) return candidate;
  return undefined;
}

/** Runs `sh -c 'exit 42'` through the wrapper: true when it exits 42 (namespaces allowed, status passed through). */
function works(candidate: PidNamespace): Promise<boolean> {
  return new Promise((done) => {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
    const { file, args } = candidate.wrap(SHELL, ['-c', `exit ${PROBE_STATUS}`], env);
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(file, args, { stdio: 'ignore', env });
    } catch {
      done(false);
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.on('error', () => {
      clearTimeout(timer);
      done(false);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      done(code === PROBE_STATUS);
    });
  });
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Where `command` would be executed from, as `execvp` finds it: a name with a slash relative to `cwd`, else the
 * first executable file of that name on `path`. Undefined when there is none. Used to report a missing command as
 * ENOENT (the wrapper itself always exists) and to hand the wrapper an absolute path.
 */
export function findExecutable(command: string, path: string, cwd: string): string | undefined {
  if (command.includes('/')) {
    const full = isAbsolute(command) ? command : resolve(cwd, command);
    return executable(full) ? full : undefined;
  }
  for (const dir of path.split(delimiter)) {
    const full = join(resolve(cwd, dir === '' ? '.' : dir), command);
    if (executable(full)) return full;
  }
  return undefined;
}

/**
 * The exit status of a wrapped command, from the wrapper's exit. The init reports a command killed by a signal
 * as `128 + n` (the shell's convention); the wrapper itself killed by a signal (SIGKILL on close) reports that.
 */
export function wrappedExitStatus(
  code: number | null,
  signal: NodeJS.Signals | null,
): { code: number | null; signal: NodeJS.Signals | null } {
  if (code === null || code <= 128 || code >= 128 + 65) return { code, signal };
  const name = signalName(code - 128);
  return name === undefined ? { code, signal } : { code: null, signal: name };
}

function signalName(n: number): NodeJS.Signals | undefined {
  for (const [name, value] of Object.entries(signals)) if (value === n) return name as NodeJS.Signals;
  return undefined;
}
