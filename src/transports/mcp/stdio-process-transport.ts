import { spawn, type ChildProcess } from 'node:child_process';
import type { JSONRPCMessage, Transport as SdkTransport } from '@modelcontextprotocol/client';
import { settledWithin, sleep } from '../../core/deadline.js';
import { ProcessGroup, processTreeMarker } from '../../process/process-group.js';
import { findExecutable, type PidNamespace, wrappedExitStatus } from '../../process/pid-namespace.js';
import type { McpSdk } from './load-mcp-sdk.js';
import { StdioLineReader, type LineReaderFailure } from './stdio-line-reader.js';

/** How much of the server's stderr is kept for error messages, in characters. */
export const STDERR_TAIL_CHARS = 4096;
/** After closing stdin, how long a server gets to exit on its own before SIGTERM, in ms. */
export const STDIN_CLOSE_GRACE_MS = 200;
/** Between SIGTERM and SIGKILL, in ms (docs/design/transports.md#mcp-stdio-shutdown). */
export const TERM_GRACE_MS = 200;
/** After SIGKILL, how long we wait for the pipes to close before giving up on them, in ms. */
const KILL_WAIT_MS = 1000;
/** How often a terminating process tree is probed, in ms. */
const TREE_POLL_MS = 25;
/** Lines on stdout that are not JSON-RPC tolerated per second before the session is dropped. */
export const MAX_JUNK_LINES_PER_SECOND = 200;
/** Bytes of such lines tolerated per second. */
export const MAX_JUNK_BYTES_PER_SECOND = 1024 * 1024;

/**
 * Start of the ids of our own requests (docs/design/transports.md#mcp-direct-calls): strings, so they never equal the
 * SDK's numeric ids.
 */
export const DIRECT_ID_PREFIX = 'utcp-kit-';

/** One request of ours waiting for its answer; the stdio transport calls it. */
export interface DirectWaiter {
  /** The server's response to the request (any message carrying its id and no method), unchecked. */
  answer(message: Record<string, unknown>): void;
  /** A `notifications/progress` whose token is the request's id: its `params`. */
  progress(params: Record<string, unknown>): void;
  /** The connection ended (`undefined`), or writing the request failed (the write error). */
  fail(error: Error | undefined): void;
}

export interface StdioProcessOptions {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Largest JSON-RPC line accepted from the server, in bytes. */
  maxMessageBytes: number;
  /**
   * Where to get the PID-namespace wrapper to start the server in (docs/design/threat-model.md#process-trees);
   * undefined or resolving to undefined: a plain child in its own process group.
   */
  pidNamespace?: () => Promise<PidNamespace | undefined>;
}

/**
 * True for `{"jsonrpc":"2.0","id":<string or integer>,"result":{...}}` with nothing else and no `_meta` in the
 * result: exactly the messages the SDK's JSON-RPC schema accepts as a result response whose result it passes through
 * unchanged. Everything else (requests, notifications, errors, results with `_meta`) goes through that schema.
 */
export function isPlainResultResponse(value: unknown): value is JSONRPCMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as { jsonrpc?: unknown; id?: unknown; result?: unknown };
  const id = m.id;
  const result = m.result;
  return (
    m.jsonrpc === '2.0' &&
    (typeof id === 'string' || Number.isSafeInteger(id)) &&
    typeof result === 'object' &&
    result !== null &&
    !Array.isArray(result) &&
    !Object.hasOwn(result, '_meta') &&
    Object.keys(value).length === 3
  );
}

/** Why the reader dropped the connection, in words. */
function describeFailure(failure: LineReaderFailure): string {
  return failure.kind === 'line-too-long'
    ? `the server sent a line longer than ${failure.limit} bytes`
    : `the server flooded stdout with output that is not JSON-RPC (${failure.lines} lines, ${failure.bytes} bytes within a second; the budget is ${MAX_JUNK_LINES_PER_SECOND} lines or ${MAX_JUNK_BYTES_PER_SECOND} bytes)`;
}

/**
 * An MCP client transport over a child process's stdin/stdout, for the SDK `Client`.
 * Unlike the SDK's own stdio transport it starts the server in its own process group (so
 * `close()` also ends grandchildren), keeps the tail of stderr for error messages, and
 * bounds the work spent on its output (line cap, junk budget: docs/design/transports.md#mcp-stdio-bounds),
 * and closes within ~0.4 s of a server that ignores SIGTERM, leaving no timers behind.
 */
export class StdioProcessTransport implements SdkTransport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #options: StdioProcessOptions;
  readonly #reader: StdioLineReader;
  readonly #serialize: McpSdk['serializeMessage'];
  readonly #validate: McpSdk['parseJSONRPCMessage'];
  #child: ChildProcess | undefined;
  /** The server's process tree: its group plus, on Linux, everything carrying its marker (docs/design/threat-model.md#process-trees). */
  #group: ProcessGroup | undefined;
  #stderrTail = '';
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  #failure: string | undefined;
  /** A write to the server's stdin failed (EPIPE: it stopped reading or is exiting); the connection is dead. */
  #writeFailed = false;
  #spawnedOk = false;
  #starting = false;
  #exitedOnItsOwn = false;
  #closed: Promise<void> | undefined;
  #streamsClosed: Promise<void> | undefined;
  /** Ids of our requests still waiting for a response: while there are none, the server does not keep the host alive. */
  readonly #pending = new Set<string | number>();
  /** Our own requests (docs/design/transports.md#mcp-direct-calls) still waiting for an answer, by id. */
  readonly #direct = new Map<string, DirectWaiter>();
  #directSeq = 0;

  constructor(options: StdioProcessOptions, sdk: Pick<McpSdk, 'parseJSONRPCMessage' | 'serializeMessage'>) {
    this.#options = options;
    this.#reader = new StdioLineReader({
      maxLineBytes: options.maxMessageBytes,
      maxJunkLinesPerSecond: MAX_JUNK_LINES_PER_SECOND,
      maxJunkBytesPerSecond: MAX_JUNK_BYTES_PER_SECOND,
    });
    this.#serialize = sdk.serializeMessage;
    this.#validate = sdk.parseJSONRPCMessage;
  }

  /** The child's stderr stream (also marks this transport as a stdio one for the SDK's version probe). */
  get stderr(): NodeJS.ReadableStream | null {
    return this.#child?.stderr ?? null;
  }

  /** The server broke an input bound (line too long, junk flood); the connection was dropped. */
  get protocolFailure(): string | undefined {
    return this.#reader.failure ? describeFailure(this.#reader.failure) : undefined;
  }

  /** The last ~4 KiB the server wrote to stderr. */
  get stderrTail(): string {
    return this.#stderrTail;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** The process started, then exited with status 0 on its own (not ended by close()). */
  get startedAndExited(): boolean {
    return this.#spawnedOk && this.#exitedOnItsOwn && this.#exit?.code === 0;
  }

  /** A write to the server failed, so the request never reached it (and `close` may not have fired yet). */
  get broken(): boolean {
    return this.#writeFailed;
  }

  /** Why the connection ended, for error messages (exit status, protocol failure), or undefined while running. */
  get endReason(): string | undefined {
    if (this.#failure) return this.#failure;
    if (!this.#exit) return undefined;
    return this.#exit.code !== null
      ? `the server process exited with code ${this.#exit.code}`
      : `the server process was killed by ${this.#exit.signal}`;
  }

  async start(): Promise<void> {
    if (this.#child || this.#starting) throw new Error('StdioProcessTransport already started');
    this.#starting = true;
    const ns = await this.#options.pidNamespace?.();
    if (this.#closed) throw new Error('StdioProcessTransport closed before it started');
    return this.#spawn(ns);
  }

  #spawn(ns: PidNamespace | undefined): Promise<void> {
    const { command, args, env, cwd } = this.#options;
    // Every process the server starts inherits the marker, so close() finds those that left the group (setsid).
    const marker = processTreeMarker();
    let file = command;
    let argv = args;
    if (ns) {
      // The wrapper always starts; a missing command is reported as the plain spawn would (ENOENT), before it.
      const found = findExecutable(command, env.PATH ?? '/usr/bin:/bin', cwd);
      if (found === undefined) {
        const error = Object.assign(new Error(`spawn ${command} ENOENT`), { code: 'ENOENT', path: command });
        this.#failure = 'the server process could not be started (ENOENT)';
        return Promise.reject(error);
      }
      ({ file, args: argv } = ns.wrap(found, args, env));
    }
    return new Promise<void>((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn(file, argv, {
          cwd,
          env: { ...env, [marker.name]: marker.value },
          stdio: ['pipe', 'pipe', 'pipe'],
          shell: false,
          windowsHide: true,
          // Own process group, so close() can signal the server's own children too.
          detached: process.platform !== 'win32',
        });
      } catch (error) {
        reject(error);
        return;
      }
      this.#child = child;
      if (child.pid !== undefined)
        this.#group = new ProcessGroup(child.pid, process.platform, marker.value, ns !== undefined);
      let spawned = false;
      child.once('spawn', () => {
        spawned = true;
        this.#spawnedOk = true;
        resolve();
      });
      child.on('error', (error) => {
        if (!spawned) {
          this.#failure = `the server process could not be started (${(error as NodeJS.ErrnoException).code ?? error.message})`;
          reject(error);
        } else {
          this.onerror?.(error);
        }
      });
      child.once('exit', (code, signal) => {
        // Through a namespace's init, a server killed by a signal exits 128 + n.
        this.#exit = ns ? wrappedExitStatus(code, signal) : { code, signal };
        this.#exitedOnItsOwn = this.#closed === undefined;
      });
      this.#streamsClosed = new Promise<void>((done) =>
        child.once('close', (code, signal) => {
          this.#exit ??= ns ? wrappedExitStatus(code, signal) : { code, signal };
          done();
          this.onclose?.();
          this.#failDirect();
        }),
      );
      child.stdin!.on('error', (error) => {
        this.#writeFailed = true;
        this.onerror?.(error);
      });
      child.stdout!.on('error', (error) => this.onerror?.(error));
      child.stderr!.on('error', () => {});
      child.stderr!.setEncoding('utf8');
      child.stderr!.on('data', (text: string) => {
        this.#stderrTail = (this.#stderrTail + text).slice(-STDERR_TAIL_CHARS);
      });
      child.stdout!.on('data', (chunk: Buffer) => this.#onStdout(chunk));
      this.#releaseAll(child);
    });
  }

  /**
   * An idle server must not keep the host process alive (a script that forgets `close()` still exits, as it does
   * with HTTP tools): the child and its pipes are unref'd at start, and stdout alone is ref'd while a request of
   * ours awaits a response (one handle to toggle per request).
   */
  #holdProcess(hold: boolean): void {
    const stdout = this.#child?.stdout as unknown as { ref?(): void; unref?(): void } | null | undefined;
    if (hold) stdout?.ref?.();
    else stdout?.unref?.();
  }

  #releaseAll(child: ChildProcess): void {
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr])
      (stream as unknown as { unref?(): void } | null)?.unref?.();
  }

  #track(message: JSONRPCMessage, outgoing: boolean): void {
    const m = message as { id?: string | number; method?: unknown; params?: { requestId?: string | number } };
    // A cancelled request may never be answered: it no longer holds the process.
    if (outgoing && m.method === 'notifications/cancelled' && m.params?.requestId !== undefined) {
      if (this.#pending.delete(m.params.requestId) && this.#pending.size === 0) this.#holdProcess(false);
      return;
    }
    if (m.id === undefined) return;
    if (outgoing && typeof m.method === 'string') {
      if (this.#pending.size === 0) this.#holdProcess(true);
      this.#pending.add(m.id);
    } else if (!outgoing && m.method === undefined && this.#pending.delete(m.id) && this.#pending.size === 0) {
      this.#holdProcess(false);
    }
  }

  #onStdout(chunk: Buffer): void {
    const failure = this.#reader.push(chunk, (line) => {
      let message: JSONRPCMessage;
      try {
        const value: unknown = JSON.parse(line);
        // Answers and progress for our own requests never reach the SDK (docs/design/transports.md#mcp-direct-calls).
        if (typeof value === 'object' && value !== null && this.#routeDirect(value as Record<string, unknown>))
          return true;
        // A plain result response (the answer to almost every request) needs no schema run: its shape is checked here.
        message = isPlainResultResponse(value) ? value : this.#validate(value);
      } catch (error) {
        // A line that is not JSON-RPC (a stray log line on stdout): report it and go on, within the budget.
        this.onerror?.(error as Error);
        return false;
      }
      this.#track(message, false);
      this.onmessage?.(message);
      return true;
    });
    if (failure && !this.#failure) {
      this.#failure = describeFailure(failure);
      this.onerror?.(new Error(this.#failure));
      // Stop reading at once (no more parse work), then end the process.
      this.#child?.stdout?.pause();
      void this.close();
    }
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (!stdin || !stdin.writable || this.#exit || this.#closed) {
      return Promise.reject(new Error(`Not connected${this.endReason ? `: ${this.endReason}` : ''}`));
    }
    this.#track(message, true);
    return new Promise<void>((resolve, reject) => {
      stdin.write(this.#serialize(message), (error) => {
        if (!error) return resolve();
        this.#writeFailed = true;
        reject(error);
      });
    });
  }

  /** A new id of our own namespace (docs/design/transports.md#mcp-direct-calls), for `sendDirect`. */
  directId(): string {
    return `${DIRECT_ID_PREFIX}${++this.#directSeq}`;
  }

  /**
   * Writes a request of ours with an id from `directId()`; its answer, its progress (when `params._meta` carries the
   * id as progress token) and the end of the connection go to `waiter`.
   * @returns false when the connection is not open (nothing was written).
   */
  sendDirect(id: string, method: string, params: Record<string, unknown>, waiter: DirectWaiter): boolean {
    const stdin = this.#child?.stdin;
    if (!stdin || !stdin.writable || this.#exit || this.#closed) return false;
    const line = JSON.stringify({ jsonrpc: '2.0', id, method, params });
    this.#direct.set(id, waiter);
    if (this.#pending.size === 0) this.#holdProcess(true);
    this.#pending.add(id);
    stdin.write(`${line}\n`, (error) => {
      if (!error) return;
      this.#writeFailed = true;
      if (this.#forgetDirect(id)) waiter.fail(error);
    });
    return true;
  }

  /** Gives up on a request of ours: its answer will be dropped, and the server is told (`notifications/cancelled`). */
  cancelDirect(id: string, reason: string): void {
    if (!this.#forgetDirect(id)) return;
    const stdin = this.#child?.stdin;
    if (!stdin || !stdin.writable || this.#exit || this.#closed) return;
    const line = JSON.stringify({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: id, reason },
    });
    stdin.write(`${line}\n`, (error) => {
      if (error) this.#writeFailed = true;
    });
  }

  /** Removes a request of ours from the waiting ones; false when it was not waiting. */
  #forgetDirect(id: string): boolean {
    if (!this.#direct.delete(id)) return false;
    if (this.#pending.delete(id) && this.#pending.size === 0) this.#holdProcess(false);
    return true;
  }

  /** Every request of ours still waiting fails: the connection is ending. */
  #failDirect(): void {
    if (this.#direct.size === 0) return;
    const waiters = [...this.#direct.values()];
    for (const id of this.#direct.keys()) this.#pending.delete(id);
    this.#direct.clear();
    for (const waiter of waiters) waiter.fail(undefined);
  }

  /**
   * Takes a message meant for one of our own requests: its answer (a late one, after we gave up, is dropped) or a
   * progress notification carrying its token. False for anything else, which goes to the SDK.
   */
  #routeDirect(message: Record<string, unknown>): boolean {
    const id = message.id;
    if (typeof id === 'string') {
      if (message.method !== undefined || !id.startsWith(DIRECT_ID_PREFIX)) return false;
      const waiter = this.#direct.get(id);
      if (waiter === undefined) return true;
      this.#forgetDirect(id);
      waiter.answer(message);
      return true;
    }
    if (id !== undefined || message.method !== 'notifications/progress') return false;
    const params = message.params as Record<string, unknown> | undefined;
    const token = typeof params === 'object' && params !== null ? params.progressToken : undefined;
    if (typeof token !== 'string' || !token.startsWith(DIRECT_ID_PREFIX)) return false;
    this.#direct.get(token)?.progress(params!);
    return true;
  }

  /**
   * Ends the server: closes stdin, then SIGTERM and SIGKILL to its process tree (group, descendants and every
   * process carrying its marker) while any of it lingers. Safe to call twice.
   */
  close(): Promise<void> {
    if (this.#closed) return this.#closed;
    this.#closed = this.#terminate();
    // No answer is taken from a connection being closed: our requests fail now, not when the process is gone.
    this.#failDirect();
    return this.#closed;
  }

  async #terminate(): Promise<void> {
    const child = this.#child;
    if (!child || !this.#streamsClosed) return;
    try {
      child.stdin?.end();
    } catch {
      // already closed
    }
    // A server that broke the input bounds gets no grace: it is killed at once.
    const grace = this.#reader.failure ? 0 : STDIN_CLOSE_GRACE_MS;
    const exited = await settledWithin(this.#streamsClosed, grace);
    // Even a server that exited on its own may leave children behind (`setsid`, a double fork): they go too.
    if (!exited || this.#treeAlive()) {
      this.#signalTree(child, 'SIGTERM');
      if (!(await this.#endedWithin(TERM_GRACE_MS))) {
        this.#signalTree(child, 'SIGKILL');
        // Something else holds the pipes open: stop reading so the handles close.
        child.stdout?.destroy();
        child.stderr?.destroy();
        await settledWithin(this.#streamsClosed, KILL_WAIT_MS);
      }
    }
    this.#reader.clear();
  }

  #treeAlive(): boolean {
    return this.#group !== undefined && process.platform !== 'win32' && this.#group.isAlive();
  }

  /** True when the pipes closed and nothing of the tree is left within `ms` (probed every 25 ms). */
  async #endedWithin(ms: number): Promise<boolean> {
    const until = Date.now() + ms;
    if (!(await settledWithin(this.#streamsClosed!, ms))) return false;
    for (;;) {
      if (!this.#treeAlive()) return true;
      const left = until - Date.now();
      if (left <= 0) return false;
      await sleep(Math.min(left, TREE_POLL_MS));
    }
  }

  #signalTree(child: ChildProcess, signal: NodeJS.Signals): void {
    try {
      if (process.platform !== 'win32' && this.#group) this.#group.signal(signal);
      else child.kill(signal);
    } catch {
      // ESRCH: already gone
    }
  }
}
