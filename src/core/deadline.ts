/**
 * The one deadline helper (docs/design/http-exchange.md#deadlines): links a caller's AbortSignal (and any other
 * scope, e.g. "the client is closing") with a timer, and maps an aborted signal to the typed error
 * to throw. Every transport, the client and the HTTP exchange use it.
 *
 * Signals are linked by hand (one controller, one listener per parent, removed on `dispose()`)
 * rather than with `AbortSignal.any`, which is slow on Node 20 and runs on every call.
 */
import { setMaxListeners } from 'node:events';
import { UtcpAbortError, UtcpError, UtcpTimeoutError } from './errors.js';

type MaybeSignal = AbortSignal | null | undefined;

/** Deadlines whose signal other code may arm extra timers on (the client's per-call scope). */
const armable = new WeakMap<AbortSignal, Deadline>();

/** Node's largest timer (2^31 - 1 ms, about 24.8 days): a longer delay would fire after 1 ms, with a warning printed. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A delay a timer is armed for: finite, positive and within Node's range (a longer one means no deadline).
 * Transports that arm a timer of their own from a limit check with it too.
 */
export function validMs(ms: number | null | undefined): ms is number {
  return typeof ms === 'number' && Number.isFinite(ms) && ms > 0 && ms <= MAX_TIMER_MS;
}

/**
 * A signal that aborts when any parent aborts (with the parent's reason), on `abort()`, or after
 * `timeoutMs` with a `UtcpTimeoutError` naming `what`. Call `dispose()` when the work is over:
 * it stops the timers and unlinks from the parents, so long-lived parents keep no listener.
 *
 * The `AbortSignal` is created only when someone reads `signal`: creating one costs microseconds on
 * Node 20, and the HTTP exchange (docs/design/http-exchange.md#deadlines) follows a deadline through
 * `onAbort` hooks instead, so a plain HTTP tool call never builds one.
 */
export class Deadline {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;
  #hooks: Set<(reason: unknown) => void> | undefined;
  readonly #parents: AbortSignal[] = [];
  readonly #what: string;
  readonly #timeoutMs: number | undefined;
  #deadlineAt: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #extra: Set<NodeJS.Timeout> | undefined;
  #timedOut = false;
  #armable = false;
  #onParent: (() => void) | undefined;

  constructor(parents: MaybeSignal | readonly MaybeSignal[], timeoutMs: number | null | undefined, what: string) {
    this.#what = what;
    this.#timeoutMs = validMs(timeoutMs) ? timeoutMs : undefined;
    const list = Array.isArray(parents) ? parents : [parents];
    for (const parent of list as MaybeSignal[]) {
      if (!parent) continue;
      if (parent.aborted) {
        this.#aborted = true;
        this.#reason = parent.reason;
        break;
      }
      this.#parents.push(parent);
    }
    if (this.#aborted) {
      this.#parents.length = 0;
      return;
    }
    if (this.#parents.length > 0) {
      const onParent = (this.#onParent = () => {
        const fired = this.#parents.find((p) => p.aborted);
        this.abort(fired?.reason);
      });
      for (const parent of this.#parents) parent.addEventListener('abort', onParent, { once: true });
    }
    if (this.#timeoutMs !== undefined) {
      this.#deadlineAt = Date.now() + this.#timeoutMs;
      this.#arm();
    }
  }

  /** Aborts with a parent, on `abort()`, or when a timer fires. Created on first read. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      const controller = (this.#controller = new AbortController());
      if (this.#aborted) controller.abort(this.#reason);
      else if (this.#armable) armable.set(controller.signal, this);
    }
    return this.#controller.signal;
  }

  /** Whether the deadline has been aborted (by a parent, `abort()` or a timer). */
  get aborted(): boolean {
    return this.#aborted;
  }

  /** The abort reason, once aborted. */
  get reason(): unknown {
    return this.#reason;
  }

  /** The main timer's duration, when there is one. */
  get timeoutMs(): number | undefined {
    return this.#timeoutMs;
  }

  /** When the main timer fires, as a `Date.now()` time (set when the deadline was created with a timer). */
  get deadlineAt(): number | undefined {
    return this.#deadlineAt;
  }

  /** True once this deadline's own timer (not a parent, not `abort()`) fired. */
  get timedOut(): boolean {
    return this.#timedOut;
  }

  /** This deadline itself (a `Deadline` is a `TimeoutScope`). */
  get source(): Deadline {
    return this;
  }

  /** Whether `withTimeout` arms timers on this deadline instead of linking a new one. */
  get isArmable(): boolean {
    return this.#armable;
  }

  /** @internal Lets `withTimeout` arm timers on this deadline's own signal (see `createDeadline`). */
  markArmable(): void {
    if (this.#aborted) return;
    this.#armable = true;
    if (this.#controller) armable.set(this.#controller.signal, this);
  }

  /**
   * Calls `hook` once, synchronously, when the deadline aborts (at once if it already has).
   * Cheaper than a listener on `signal`. @returns the function that removes the hook.
   */
  onAbort(hook: (reason: unknown) => void): () => void {
    if (this.#aborted) {
      hook(this.#reason);
      return noop;
    }
    const hooks = (this.#hooks ??= new Set());
    hooks.add(hook);
    return () => {
      hooks.delete(hook);
    };
  }

  #arm(): void {
    const ms = this.#timeoutMs!;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timedOut = true;
      this.abort(new UtcpTimeoutError(this.#what, ms));
    }, ms);
  }

  /** Restarts the main timer (idle timeouts). No-op without a timer or once aborted. */
  reset(): void {
    if (this.#timer === undefined || this.#aborted) return;
    clearTimeout(this.#timer);
    this.#arm();
  }

  /**
   * Arms one more timer on this same deadline: after `ms` it aborts with a `UtcpTimeoutError` naming `what`.
   * Returns the disarm function. Cheaper than a second linked deadline.
   */
  arm(ms: number | undefined, what: string): () => void {
    if (!validMs(ms) || this.#aborted) return noop;
    const timer = setTimeout(() => {
      this.#extra?.delete(timer);
      this.#timedOut = true;
      this.abort(new UtcpTimeoutError(what, ms));
    }, ms);
    (this.#extra ??= new Set()).add(timer);
    return () => {
      clearTimeout(timer);
      this.#extra?.delete(timer);
    };
  }

  /** Stops the timers; parents and `abort()` still apply. */
  clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#extra) {
      for (const t of this.#extra) clearTimeout(t);
      this.#extra.clear();
    }
  }

  /** Stops the timers and unlinks from the parents. Safe to call twice. */
  dispose(): void {
    this.clearTimer();
    if (this.#onParent) {
      for (const parent of this.#parents) parent.removeEventListener('abort', this.#onParent);
      this.#onParent = undefined;
    }
    this.#parents.length = 0;
    if (this.#armable) {
      this.#armable = false;
      if (this.#controller) armable.delete(this.#controller.signal);
    }
  }

  /** Disposes and aborts the work (e.g. the consumer stopped reading a stream). */
  abort(reason?: unknown): void {
    this.dispose();
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    this.#controller?.abort(this.#reason);
    const hooks = this.#hooks;
    this.#hooks = undefined;
    if (hooks) for (const hook of hooks) hook(this.#reason);
  }

  /** The typed error for this deadline's abort: `UtcpTimeoutError` for a deadline, else `UtcpAbortError`. */
  error(what = this.#what, timeoutMs = this.#timeoutMs): UtcpError {
    return abortError(this, what, timeoutMs);
  }
}

const noop = () => {};

/**
 * A controller for a long-lived scope ("the client is closing", "this manual was deregistered"): every operation
 * in the scope links a listener to its signal and removes it when done, so many at once is normal, not a leak.
 * Node would print a MaxListenersExceededWarning past 10; the library prints nothing, so the limit is lifted.
 */
export function scopeController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

/**
 * Creates a deadline over `parents` with an optional timer (`timeoutMs` ≤ 0 or absent: none).
 * With `armable: true`, `withTimeout()` on its signal arms timers on it instead of linking a new one:
 * use it only for a signal that scopes exactly one operation (the client's per-call signal).
 */
export function createDeadline(
  parents: MaybeSignal | readonly MaybeSignal[],
  timeoutMs: number | null | undefined,
  what: string,
  options: { armable?: boolean } = {},
): Deadline {
  const deadline = new Deadline(parents, timeoutMs, what);
  if (options.armable) deadline.markArmable();
  return deadline;
}

/** A signal, or a deadline followed without building its signal (see `Deadline`). */
export type AbortSource = AbortSignal | Deadline;

/** What `withTimeout` returns: the signal to pass on, and `dispose()` for when the work is over. */
export interface TimeoutScope {
  readonly signal: AbortSignal;
  /** The same scope without forcing an `AbortSignal` into existence (for `onAbort`, `abortError`). */
  readonly source: AbortSource;
  /** Stops the timer; the signal keeps following its parents until `dispose()`. */
  clearTimer(): void;
  dispose(): void;
}

/**
 * A transport's own timeout on top of the signal (or call scope, see `callScope`) it received. On the
 * client's per-call scope the timer is armed on it directly (no second controller on the hot path);
 * otherwise a linked `Deadline` is created.
 */
export function withTimeout(
  signal: AbortSource,
  timeoutMs: number | null | undefined,
  what: string,
): TimeoutScope & { readonly source: AbortSource } {
  const owner = signal instanceof Deadline ? (signal.isArmable ? signal : undefined) : armable.get(signal);
  if (owner) return new ArmedScope(owner, owner.arm(timeoutMs ?? undefined, what));
  return new Deadline(signal instanceof Deadline ? signal.signal : signal, timeoutMs, what);
}

/**
 * A timer armed on an armable deadline, as a `TimeoutScope`. A class rather than an object literal with a getter:
 * the literal costs about half a microsecond per call on Node 20 (docs/design/http-exchange.md#per-call-cost).
 */
class ArmedScope implements TimeoutScope {
  readonly source: Deadline;
  readonly clearTimer: () => void;
  readonly dispose: () => void;
  constructor(owner: Deadline, disarm: () => void) {
    this.source = owner;
    this.clearTimer = disarm;
    this.dispose = disarm;
  }
  get signal(): AbortSignal {
    return this.source.signal;
  }
}

/**
 * The time left until `options.deadline` (a `Date.now()` time, see `CallOptions.deadline`), never below 0;
 * undefined when there is no deadline. For a protocol that carries a deadline of its own (gRPC, a server-side
 * timeout parameter).
 */
export function remainingMs(options: { readonly deadline?: number }): number | undefined {
  const at = options.deadline;
  return at === undefined ? undefined : Math.max(0, at - Date.now());
}

/** The `signal` accessor of every `CallScopeCarrier`: own and enumerable, as on an object literal. */
const CARRIED_SIGNAL: PropertyDescriptor = { enumerable: true, configurable: true };

/**
 * Base of the options objects the client builds for one call (docs/design/http-exchange.md#per-call-cost): carries
 * the call's deadline in a private field (`callScope` finds it; a spread copy, a plain object, does not carry it)
 * and defines `signal` as an own enumerable getter that builds the deadline's signal on first read, so the object
 * looks and copies like the object literal it replaces. Cheaper than a literal with a getter plus a WeakMap entry.
 */
export class CallScopeCarrier {
  readonly #scope: Deadline;
  declare readonly signal: AbortSignal;
  constructor(scope: Deadline) {
    Object.defineProperty(this, 'signal', CARRIED_SIGNAL);
    this.#scope = scope;
  }
  static {
    CARRIED_SIGNAL.get = function (this: CallScopeCarrier) {
      return this.#scope.signal;
    };
  }
  /** The deadline carried by `options`, when it is a carrier. */
  static scopeOf(options: object): Deadline | undefined {
    return #scope in options ? (options as CallScopeCarrier).#scope : undefined;
  }
}

/** The call's deadline when the client built these options (a `CallScopeCarrier`), else their `signal`. */
export function callScope(options: { readonly signal: AbortSignal }): AbortSource {
  return CallScopeCarrier.scopeOf(options) ?? options.signal;
}

/** The `AbortSignal` of a source (a deadline builds it now). */
export function asSignal(source: AbortSource): AbortSignal {
  return source instanceof Deadline ? source.signal : source;
}

/**
 * Calls `hook` once when `source` aborts (synchronously, at once if it already has).
 * @returns the function that removes the hook.
 */
export function onAbort(source: AbortSource, hook: (reason: unknown) => void): () => void {
  if (source instanceof Deadline) return source.onAbort(hook);
  if (source.aborted) {
    hook(source.reason);
    return noop;
  }
  const listener = () => hook(source.reason);
  source.addEventListener('abort', listener, { once: true });
  return () => source.removeEventListener('abort', listener);
}

export function isTimeoutReason(reason: unknown): boolean {
  return (
    reason instanceof UtcpTimeoutError ||
    (typeof reason === 'object' && reason !== null && (reason as { name?: string }).name === 'TimeoutError')
  );
}

/**
 * THE abort → error mapping: an aborted signal's reason becomes the typed error to throw.
 * A `UtcpError` reason (a deadline's `UtcpTimeoutError`, `CLIENT_CLOSED`) is passed through; a
 * platform timeout becomes `UtcpTimeoutError`; anything else `UtcpAbortError` (the reason kept as cause).
 */
export function abortError(signal: AbortSource, what: string, timeoutMs?: number): UtcpError {
  const reason = signal.reason;
  if (reason instanceof UtcpError) return reason;
  if (isTimeoutReason(reason)) return new UtcpTimeoutError(what, timeoutMs, { cause: reason });
  return new UtcpAbortError(what, { cause: reason });
}

/** Throws the typed abort/timeout error if the signal is already aborted. */
export function throwIfAborted(signal: AbortSource, what: string, timeoutMs?: number): void {
  if (signal.aborted) throw abortError(signal, what, timeoutMs);
}

/**
 * Maps an error caught while `signal` was in force: once the signal aborted, the typed abort/timeout
 * error wins over whatever the aborted operation threw; otherwise the error is returned unchanged.
 */
export function settleError(error: unknown, signal: AbortSource, what: string, timeoutMs?: number): unknown {
  if (
    signal.aborted &&
    !(
      error instanceof UtcpError &&
      (error.code === 'TIMEOUT' || error.code === 'ABORTED' || error.code === 'CLIENT_CLOSED')
    )
  ) {
    return abortError(signal, what, timeoutMs);
  }
  return error;
}

/**
 * Settles like `promise`, unless `source` aborts first: then it rejects at once with `rejectWith(reason)`
 * and calls `onLost(promise)` so what the promise still delivers can be released (a response body, a socket).
 * The abort hook is removed either way; the lost promise's rejection is observed.
 */
export function raceAbort<T>(
  promise: Promise<T>,
  source: AbortSource,
  rejectWith: (reason: unknown) => unknown,
  onLost?: (promise: Promise<T>) => void,
): Promise<T> {
  const lose = () => {
    promise.catch(() => {});
    onLost?.(promise);
  };
  if (source.aborted) {
    lose();
    return Promise.reject(rejectWith(source.reason));
  }
  return new Promise<T>((resolve, reject) => {
    const unsubscribe = onAbort(source, (reason) => {
      lose();
      reject(rejectWith(reason));
    });
    promise.then(
      (v) => {
        unsubscribe();
        resolve(v);
      },
      (e) => {
        unsubscribe();
        reject(e);
      },
    );
  });
}

/**
 * Rejects with the typed abort error as soon as `signal` aborts; otherwise settles like `promise`.
 * Removes its listener either way.
 */
export function raceSignal<T>(promise: Promise<T>, signal: AbortSource, what: string, timeoutMs?: number): Promise<T> {
  return raceAbort(promise, signal, () => abortError(signal, what, timeoutMs));
}

/**
 * Waits `ms`, rejecting with the signal's reason as soon as it aborts (the timer is cleared then).
 * Without a signal it only waits.
 */
export function sleep(ms: number, signal?: AbortSource): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    let unsubscribe = noop;
    const timer = setTimeout(() => {
      unsubscribe();
      resolve();
    }, ms);
    if (signal)
      unsubscribe = onAbort(signal, (reason) => {
        clearTimeout(timer);
        reject(reason);
      });
  });
}

/**
 * True when `promise` settles (either way) within `ms`, false when the time runs out first; the timer is
 * cleared either way. For bounded waits on shutdown (a DELETE on close, pipes closing after a kill).
 */
export async function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** An idle timeout: fires `onIdle` when `restart()` was not called again within `ms`. */
export interface IdleTimer {
  /** (Re)starts the countdown. */
  restart(): void;
  /** Stops the countdown until the next `restart()` (e.g. while the consumer holds an item). */
  pause(): void;
}

/**
 * An idle timer over `ms`; with no valid delay (absent, ≤ 0, or past Node's timer range) it never fires.
 * Call `pause()` when the work is over so no timer is left behind.
 */
export function idleTimer(ms: number | null | undefined, onIdle: () => void): IdleTimer {
  if (!validMs(ms)) return { restart: noop, pause: noop };
  let timer: NodeJS.Timeout | undefined;
  return {
    restart() {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timer = undefined;
        onIdle();
      }, ms);
    },
    pause() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
