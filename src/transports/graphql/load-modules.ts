import type * as GraphqlJs from 'graphql';
import type { WebSocket as WsWebSocket } from 'ws';
import { UtcpError } from '../../core/errors.js';

function missing(pkg: string, cause: unknown): UtcpError {
  return new UtcpError('DEPENDENCY_MISSING', `The graphql transport needs ${pkg}: npm install ${pkg}`, { cause });
}

/** The `ws` WebSocket class, for subscriptions. @throws UtcpError DEPENDENCY_MISSING */
export async function loadWebSocket(): Promise<typeof WsWebSocket> {
  try {
    return (await import('ws')).WebSocket;
  } catch (cause) {
    throw missing('ws', cause);
  }
}

export type GraphqlParser = Pick<typeof GraphqlJs, 'parse' | 'parseValue' | 'valueFromASTUntyped'>;

/** graphql-js, used to parse default values and documents. @throws UtcpError DEPENDENCY_MISSING */
export async function loadGraphqlParser(): Promise<GraphqlParser> {
  try {
    const m = await import('graphql');
    return { parse: m.parse, parseValue: m.parseValue, valueFromASTUntyped: m.valueFromASTUntyped };
  } catch (cause) {
    throw missing('graphql', cause);
  }
}
