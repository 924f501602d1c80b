import type { WebSocket as WsSocket } from 'ws';
import { UtcpError } from '../../core/errors.js';

/** The `ws` WebSocket class. */
export type WebSocketClass = typeof WsSocket;

/**
 * Imports `ws` on first use, so loading utcp-kit does not.
 * @throws UtcpError (DEPENDENCY_MISSING) with the install command when it is missing.
 */
export async function loadWs(): Promise<WebSocketClass> {
  try {
    const mod = (await import('ws')) as unknown as { WebSocket?: WebSocketClass; default?: WebSocketClass };
    const ctor = mod.WebSocket ?? mod.default;
    if (!ctor) throw new Error('the module has no WebSocket export');
    return ctor;
  } catch (cause) {
    throw new UtcpError('DEPENDENCY_MISSING', 'The websocket transport needs ws: npm install ws', { cause });
  }
}
