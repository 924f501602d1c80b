import type { Metadata } from '@grpc/grpc-js';
import { UtcpError } from '../../core/errors.js';
import type { GrpcTarget } from './grpc-target.js';
import type { GrpcCallTemplate } from './template.js';
import type { ConnectCodec, WebProtocol } from './web-call.js';

/** Where and how an HTTP/1.1 wire protocol sends its calls (docs/design/transports.md#grpc-wire-protocols). */
export interface WebWire {
  protocol: WebProtocol;
  codec: ConnectCodec;
  /** `http(s)://host:port`, the method path appended per call. */
  baseUrl: string;
  /** The checked metadata and auth, as request headers. */
  headers: Record<string, string>;
}

/** Headers that frame the HTTP/1.1 message or belong to the wire protocol: never taken from metadata or auth. */
const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'content-type',
  'content-encoding',
  'accept',
  'accept-encoding',
  'x-grpc-web',
  'x-user-agent',
]);

/**
 * The template's wire protocol: undefined for native gRPC (`wire_protocol` absent or "grpc"), else the gRPC-Web or
 * Connect wire. Metadata keys were already checked by buildMetadata; they travel as plain HTTP headers.
 * @throws UtcpError INVALID_MANUAL on an unknown wire_protocol or connect_codec.
 */
export function webWire(template: GrpcCallTemplate, target: GrpcTarget, metadata: Metadata): WebWire | undefined {
  const protocol = template.wire_protocol ?? 'grpc';
  if (protocol === 'grpc') return undefined;
  if (protocol !== 'grpc-web' && protocol !== 'connect') {
    throw new UtcpError(
      'INVALID_MANUAL',
      `gRPC wire_protocol ${JSON.stringify(protocol)} is not supported; use "grpc", "grpc-web" or "connect"`,
    );
  }
  const codec = template.connect_codec ?? 'json';
  if (codec !== 'json' && codec !== 'proto') {
    throw new UtcpError(
      'INVALID_MANUAL',
      `gRPC connect_codec ${JSON.stringify(codec)} is not supported; use "json" or "proto"`,
    );
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(metadata.getMap())) {
    if (RESERVED_HEADERS.has(name) || name.startsWith('connect-') || name.startsWith('proxy-')) {
      throw new UtcpError(
        'INVALID_MANUAL',
        `gRPC metadata key ${JSON.stringify(name)} is not allowed with wire_protocol "${protocol}": the HTTP message and the protocol own it`,
      );
    }
    headers[name] = String(value);
  }
  const host = target.host.includes(':') ? `[${target.host}]` : target.host;
  return { protocol, codec, baseUrl: `${target.useSsl ? 'https' : 'http'}://${host}:${target.port}`, headers };
}
