import { createDeadline, type Deadline, scopeController } from '../core/deadline.js';
import { UtcpError } from '../core/errors.js';

/**
 * Cancellation scopes of one socket transport instance: `close()` aborts every running call,
 * `deregisterManual` aborts the calls of one manual. Abort reasons are typed `UtcpError`s, which
 * `abortError()` passes through unchanged. Calls link to their manual's scope with the deadline helper.
 */
export class AbortScopes {
  readonly #type: string;
  #closed = false;
  readonly #byManual = new Map<string, AbortController>();

  constructor(type: string) {
    this.#type = type;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Throws CLIENT_CLOSED once `closeAll()` ran. */
  assertOpen(): void {
    if (this.closed) throw new UtcpError('CLIENT_CLOSED', `The ${this.#type} transport is closed`);
  }

  /** Aborts when the manual is deregistered or the transport closes. @throws CLIENT_CLOSED after close. */
  manualSignal(manualName: string): AbortSignal {
    this.assertOpen();
    let manual = this.#byManual.get(manualName);
    if (!manual) {
      manual = scopeController();
      this.#byManual.set(manualName, manual);
    }
    return manual.signal;
  }

  /**
   * The call's signal joined with its manual's scope, plus an optional timer (`timeoutMs`, aborting
   * with a `UtcpTimeoutError` naming `what`). Dispose it when the call ends. @throws CLIENT_CLOSED after close.
   */
  callDeadline(manualName: string, callSignal: AbortSignal, timeoutMs: number | undefined, what: string): Deadline {
    return createDeadline([callSignal, this.manualSignal(manualName)], timeoutMs, what);
  }

  /** Aborts the running calls of one manual. */
  abortManual(manualName: string): void {
    const manual = this.#byManual.get(manualName);
    this.#byManual.delete(manualName);
    manual?.abort(
      new UtcpError('CLIENT_CLOSED', `Manual ${manualName} was deregistered during the ${this.#type} call`),
    );
  }

  /** Aborts every running call; later calls throw CLIENT_CLOSED. Safe to call twice. */
  closeAll(): void {
    if (this.#closed) return;
    this.#closed = true;
    const reason = new UtcpError('CLIENT_CLOSED', `The ${this.#type} transport was closed during the call`);
    for (const manual of this.#byManual.values()) manual.abort(reason);
    this.#byManual.clear();
  }
}
