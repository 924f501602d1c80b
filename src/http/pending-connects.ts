/**
 * Connections still being opened when their pool closes are destroyed at once
 * (docs/design/threat-model.md#close-during-connect). undici's `Agent.destroy()` does not reach a socket whose
 * connect is pending (no request owns it yet): it stays open, and keeps the host process alive, until the connect
 * timeout (10 s) passes. Wrapping the pool's connector tracks each such socket from `connect()` to its callback.
 */
import type { buildConnector } from 'undici';
import { onAbort } from '../core/deadline.js';

/** `connector` with every socket it is still opening destroyed when `closing` aborts; later connects fail at once. */
export function abortableConnector(
  connector: buildConnector.connector,
  closing: AbortSignal,
  what = 'Connection',
): buildConnector.connector {
  const opening = new Set<{ destroy(): void }>();
  // Lives as long as the pool: the hook is never removed (the pool's `closing` signal ends with it).
  onAbort(closing, () => {
    for (const socket of opening) socket.destroy();
    opening.clear();
  });
  return (options, callback) => {
    if (closing.aborted) {
      callback(new Error(`${what}: the connection pool is closed`), null);
      return;
    }
    let socket: { destroy(): void } | undefined;
    let done = false;
    const result = connector(options, (error, connected) => {
      done = true;
      if (socket) opening.delete(socket);
      callback(error as Error, connected as never);
    }) as unknown;
    if (!done && isDestroyable(result)) {
      socket = result;
      opening.add(socket);
    }
    return result as never;
  };
}

function isDestroyable(value: unknown): value is { destroy(): void } {
  return typeof value === 'object' && value !== null && typeof (value as { destroy?: unknown }).destroy === 'function';
}
