import { UtcpError } from '../../core/errors.js';

/**
 * Cancellation scopes of one socket transport instance: `close()` aborts every running call,
 * `deregisterManual` aborts the calls of one manual. Abort reasons are typed `UtcpError`s, which
 * `abortError()` passes through unchanged.
 */
export class AbortScopes {
  readonly #type: string;
  readonly #all = new AbortController();
  readonly #byManual = new Map<string, AbortController>();

  constructor(type: string) {
    this.#type = type;
  }

  get closed(): boolean {
    return this.#all.signal.aborted;
  }

  /** Throws CLIENT_CLOSED once `closeAll()` ran. */
  assertOpen(): void {
    if (this.closed) throw new UtcpError('CLIENT_CLOSED', `The ${this.#type} transport is closed`);
  }

  /** The call's signal joined with the transport's and the manual's scope. @throws CLIENT_CLOSED after close. */
  signalFor(manualName: string, callSignal: AbortSignal): AbortSignal {
    this.assertOpen();
    let manual = this.#byManual.get(manualName);
    if (!manual) {
      manual = new AbortController();
      this.#byManual.set(manualName, manual);
    }
    return AbortSignal.any([callSignal, this.#all.signal, manual.signal]);
  }

  /** Aborts the running calls of one manual. */
  abortManual(manualName: string): void {
    const manual = this.#byManual.get(manualName);
    this.#byManual.delete(manualName);
    manual?.abort(new UtcpError('CLIENT_CLOSED', `Manual ${manualName} was deregistered during the ${this.#type} call`));
  }

  /** Aborts every running call; later calls throw CLIENT_CLOSED. Safe to call twice. */
  closeAll(): void {
    if (this.closed) return;
    this.#all.abort(new UtcpError('CLIENT_CLOSED', `The ${this.#type} transport was closed during the call`));
    this.#byManual.clear();
  }
}
