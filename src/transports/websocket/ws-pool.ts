import { UtcpError } from '../../core/errors.js';
import { raceSignal } from '../../core/deadline.js';
import { CallGate } from './call-gate.js';
import type { WsConnection } from './ws-connection.js';

/** One pooled connection slot: (manual, url, protocol, handshake settings). */
export interface PoolEntry {
  readonly key: string;
  readonly manualName: string;
  readonly gate: CallGate;
  connection?: WsConnection;
  opening?: Promise<WsConnection>;
}

/**
 * The persistent connections of one transport instance, re-opened lazily after the server
 * drops them, plus the per-call (dedicated) connections still open, so `close()` reaches all.
 */
export class WsPool {
  readonly #entries = new Map<string, PoolEntry>();
  readonly #dedicated = new Set<WsConnection>();

  /** The slot for `key`, created on first use. */
  entry(key: string, manualName: string): PoolEntry {
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = { key, manualName, gate: new CallGate() };
      this.#entries.set(key, entry);
    }
    return entry;
  }

  /**
   * The slot's open connection, opening one with `open` when there is none (concurrent callers share
   * the attempt). `open` must not depend on one caller's signal; each caller only stops waiting on its own.
   */
  connection(
    entry: PoolEntry,
    open: () => Promise<WsConnection>,
    signal: AbortSignal,
    what: string,
    callerTimeoutMs?: number,
  ): Promise<WsConnection> {
    if (entry.connection?.isOpen) return Promise.resolve(entry.connection);
    if (!entry.opening) {
      const opening = open().then((connection) => {
        if (this.#entries.get(entry.key) !== entry) {
          connection.terminate();
          throw new UtcpError('CLIENT_CLOSED', `${what}: the connection pool was closed while connecting`);
        }
        entry.connection = connection;
        connection.onClose(() => {
          if (entry.connection === connection) entry.connection = undefined;
        });
        return connection;
      });
      entry.opening = opening;
      opening.then(
        () => (entry.opening === opening ? (entry.opening = undefined) : undefined),
        () => (entry.opening === opening ? (entry.opening = undefined) : undefined),
      );
    }
    return raceSignal(entry.opening, signal, what, callerTimeoutMs);
  }

  /** Tracks a per-call connection until it closes. */
  trackDedicated(connection: WsConnection): void {
    this.#dedicated.add(connection);
    connection.onClose(() => this.#dedicated.delete(connection));
  }

  /** Closes and forgets the pooled connections of one manual. */
  async closeManual(manualName: string): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const [key, entry] of this.#entries) {
      if (entry.manualName !== manualName) continue;
      this.#entries.delete(key);
      if (entry.connection) closing.push(entry.connection.close());
    }
    await Promise.all(closing);
  }

  /** Closes every pooled and per-call connection. Safe to call twice. */
  async closeAll(): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const entry of this.#entries.values()) if (entry.connection) closing.push(entry.connection.close());
    this.#entries.clear();
    for (const c of this.#dedicated) closing.push(c.close());
    this.#dedicated.clear();
    await Promise.all(closing);
  }
}
