import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import { TransportError, UtcpError } from '../../core/errors.js';
import { type AbortSource, abortError, onAbort } from '../../core/deadline.js';
import { ProcessGroup } from '../../process/process-group.js';
import { type PidNamespace, wrappedExitStatus } from '../../process/pid-namespace.js';

const noop = () => {};

/** What unshare (util-linux) prints when the command it waited for was killed by SIGKILL. */
const UNSHARE_SIGKILL = /unshare: sigprocmask unblock failed/;

/** Bytes of the shell's own stderr kept for error messages. */
const STDERR_TAIL_BYTES = 4096;

export interface RunProcessOptions {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /**
   * Aborting kills the whole process group; the promise then rejects with `abortError(signal, what, timeoutMs)`. A
   * signal, or a deadline followed through its hooks without building one.
   */
  signal: AbortSource;
  /** Names the operation in errors, e.g. `cli call demo.echo`. */
  what: string;
  /** Caller deadline, for timeout messages. */
  timeoutMs?: number;
  /** Cap on the shell's stdout; crossing it kills the group and rejects with RESPONSE_TOO_LARGE. */
  maxStdoutBytes: number;
  platform: NodeJS.Platform;
  /** The value of `TREE_MARKER_NAME` in `env`, so that processes which leave the group are still found. */
  treeMarker?: string;
  /**
   * Start the shell inside a PID namespace of its own (docs/design/threat-model.md#process-trees): the kernel ends
   * every process it started when it exits or the call is killed. `file` must then be an absolute path.
   */
  pidNamespace?: PidNamespace;
  /** Run `file` itself as the namespace's init where the wrapper allows (WrapOptions.commandAsInit). */
  commandAsInit?: boolean;
  /** Receives stdout chunks (counted against the cap) instead of collecting them in the result. */
  onStdout?: (chunk: Buffer) => void;
  /**
   * Gives the child a pipe on fd 3 and hands over its writable end. (Not stdin: Node's pipes are sockets, and
   * bash reads ~/.bashrc when its stdin is a socket, as if started by rshd.)
   */
  onControl?: (control: Writable) => void;
  /**
   * True once the child has said all it will say (an end marker): then its exit settles the call without
   * waiting for the pipes, which background processes may hold open.
   */
  isComplete?: () => boolean;
  /** Receives the group when background processes outlive a shell that exited normally. */
  onLingering?: (group: ProcessGroup) => void;
}

export interface ProcessResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  /** Last bytes of the shell's stderr (decoded as UTF-8). */
  stderrTail: string;
}

/**
 * Spawns one shell as the leader of a new process group and waits for it.
 * Abort or an oversized stdout sends SIGTERM to the group (SIGKILL after 2 s); the promise settles
 * once the shell has exited. stdin is closed.
 */
export function runProcess(options: RunProcessOptions): Promise<ProcessResult> {
  if (options.signal.aborted) return Promise.reject(abortError(options.signal, options.what, options.timeoutMs));
  return new Promise<ProcessResult>((resolve, reject) => {
    let child: ChildProcess;
    const ns = options.pidNamespace;
    const { file, args, commandIsInit } = ns
      ? ns.wrap(options.file, options.args, options.env, { commandAsInit: options.commandAsInit === true })
      : { file: options.file, args: options.args, commandIsInit: false };
    try {
      child = spawn(file, args, {
        cwd: options.cwd,
        env: options.env,
        detached: options.platform !== 'win32',
        windowsHide: true,
        stdio: options.onControl ? ['ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'],
      });
    } catch (cause) {
      reject(new TransportError(`${options.what}: cannot start ${options.file}`, { cause }));
      return;
    }
    const group =
      child.pid !== undefined
        ? new ProcessGroup(child.pid, options.platform, options.treeMarker, ns !== undefined)
        : undefined;
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr: Buffer = Buffer.alloc(0);
    let failure: UtcpError | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let done = false;

    const finish = () => {
      if (done) return;
      done = true;
      offAbort();
      (child.stdio[3] as Writable | undefined)?.destroy();
      child.stdout?.destroy();
      child.stderr?.destroy();
      if (group) {
        if (group.terminating) group.settle();
        // A namespace wrapper exits only once its namespace is empty: nothing can linger, and the /proc scan
        // would cost about 2 ms of CPU per call (docs/design/transports.md#cli-fast-path).
        else if (!group.contained && group.isAlive()) options.onLingering?.(group);
      }
      if (failure) reject(failure);
      else {
        // Through a namespace's init, a shell killed by a signal exits 128 + n; a shell that reached its end
        // marker, or was the init itself, exited with that status itself.
        const complete = options.isComplete?.() === true;
        let status = ns && !commandIsInit && exit && !complete ? wrappedExitStatus(exit.code, exit.signal) : exit;
        // A shell that is the init and was killed by SIGKILL (only that reaches an init from outside without a
        // handler): unshare cannot re-raise SIGKILL on itself, says so on stderr and exits 1.
        if (commandIsInit && exit?.code === 1 && !complete && UNSHARE_SIGKILL.test(stderr.toString('latin1'))) {
          status = { code: null, signal: 'SIGKILL' };
        }
        resolve({
          exitCode: status?.code ?? null,
          signal: status?.signal ?? null,
          stdout: Buffer.concat(stdout),
          stderrTail: stderr.toString('utf8'),
        });
      }
    };
    const fail = (error: UtcpError) => {
      failure ??= error;
      group?.terminate();
      if (exit) finish();
    };
    let offAbort = noop;
    const cancel = () => fail(abortError(options.signal, options.what, options.timeoutMs));
    offAbort = onAbort(options.signal, cancel);
    const control = child.stdio[3] as Writable | undefined;
    if (options.onControl && control) {
      control.on('error', () => {}); // EPIPE: the shell is gone; its exit settles the call
      options.onControl(control);
    }

    child.stdout!.on('data', (chunk: Buffer) => {
      if (failure) return;
      stdoutBytes += chunk.length;
      if (stdoutBytes > options.maxStdoutBytes) {
        fail(new UtcpError('RESPONSE_TOO_LARGE', `${options.what}: output exceeds ${options.maxStdoutBytes} bytes`));
        return;
      }
      if (options.onStdout) options.onStdout(chunk);
      else stdout.push(chunk);
      if (exit && options.isComplete?.()) finish();
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr = Buffer.concat([stderr, chunk]);
      if (stderr.length > STDERR_TAIL_BYTES) stderr = stderr.subarray(stderr.length - STDERR_TAIL_BYTES);
    });
    child.on('error', (cause) => {
      if (child.pid === undefined && !done) {
        done = true;
        offAbort();
        reject(new TransportError(`${options.what}: cannot start ${options.file}`, { cause }));
      }
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // After an abort, do not wait for pipes that a surviving grandchild might hold open.
      if (failure || options.isComplete?.()) finish();
    });
    child.on('close', (code, signal) => {
      exit ??= { code, signal };
      finish();
    });
  });
}
