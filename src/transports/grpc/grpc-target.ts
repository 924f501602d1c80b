import type { LookupAddress } from 'node:dns';
import { connect, isIP } from 'node:net';
import { onAbort } from '../../core/deadline.js';
import { TransportError, UrlPolicyError, UtcpError } from '../../core/errors.js';
import { assertDialAllowed, guardedLookup, type LookupFunction } from '../../net/dial-guard.js';
import type { GrpcCallTemplate } from './template.js';
import { isLoopbackLiteral } from '../../core/url-policy.js';

export interface GrpcTarget {
  /** `host:port`, IPv6 hosts bracketed: what grpc-js dials. */
  address: string;
  /** The host as written (IPv6 without brackets), and the port. */
  host: string;
  port: number;
  useSsl: boolean;
  /** Channel cache key: (host, port, use_ssl), plus the pinned name. */
  key: string;
  /** Set when `address` is the checked, resolved address of this name (docs/design/threat-model.md#dial-guard). */
  pinnedHost?: string;
}

const HOSTNAME = /^[A-Za-z0-9.-]+$/;
const IPV6 = /^[0-9A-Fa-f:.]+$/;

/**
 * Validates host, port, use_ssl and transport before any I/O. Plaintext is allowed only to loopback
 * literal hosts (docs/design/security.md#url-policy), so metadata credentials never travel in clear.
 * @throws UtcpError INVALID_MANUAL, UrlPolicyError
 */
export function grpcTarget(template: GrpcCallTemplate): GrpcTarget {
  const { host, port } = template;
  if (template.transport !== undefined && template.transport !== null && template.transport !== 'grpc') {
    throw new UtcpError(
      'INVALID_MANUAL',
      `gRPC transport "${String(template.transport)}" is not supported; only "grpc"`,
    );
  }
  if (typeof host !== 'string' || host === '') throw new UtcpError('INVALID_MANUAL', 'gRPC host is required');
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const ipv6 = bare.includes(':');
  if (ipv6 ? !IPV6.test(bare) : !HOSTNAME.test(bare))
    throw new UtcpError('INVALID_MANUAL', `gRPC host ${JSON.stringify(host)} is not a host name or IP address`);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new UtcpError('INVALID_MANUAL', `gRPC port must be an integer from 1 to 65535, not ${String(port)}`);
  const useSsl = template.use_ssl ?? false;
  if (typeof useSsl !== 'boolean') throw new UtcpError('INVALID_MANUAL', 'gRPC use_ssl must be a boolean');
  const address = ipv6 ? `[${bare}]:${port}` : `${bare}:${port}`;
  if (!useSsl && !isLoopbackLiteral(ipv6 ? `[${bare}]` : bare)) {
    throw new UrlPolicyError(
      `gRPC target ${address} is not allowed (plaintext to a non-loopback host); gRPC must use TLS (use_ssl: true) or be a literal loopback address`,
    );
  }
  return { address, host: bare, port, useSsl, key: `${address}|${useSsl ? 'tls' : 'plain'}` };
}

/**
 * The dial guard for gRPC (docs/design/threat-model.md#dial-guard). For a tool of a remote-sourced manual the host
 * is resolved here, through the client's resolver, and every answer must be a non-loopback address; the channel
 * then dials the checked address itself (the host name still serves TLS: SNI, certificate check and `:authority`),
 * so grpc-js never resolves the name on its own and a later DNS answer cannot lead it to loopback.
 * Local manuals keep grpc-js's own resolution. @throws UrlPolicyError
 */
export async function pinGrpcTarget(
  target: GrpcTarget,
  remote: boolean,
  signal: AbortSignal,
  lookup: LookupFunction | undefined,
): Promise<GrpcTarget> {
  if (!remote) return target;
  assertDialAllowed(target.host, true, `gRPC connection to ${target.address}`);
  if (isIP(target.host) !== 0) return target;
  const resolve = guardedLookup({
    remote: true,
    lookup,
    closing: signal,
    what: `gRPC connection to ${target.address}`,
  });
  const answers = await new Promise<LookupAddress[]>((done, fail) =>
    resolve(target.host, { all: true }, (error, address) => {
      if (error) fail(error);
      else done(Array.isArray(address) ? address : [{ address, family: isIP(address) }]);
    }),
  ).catch((error: unknown) => {
    if (error instanceof UtcpError) throw error;
    throw new TransportError(
      `gRPC connection to ${target.address} failed: cannot resolve ${target.host} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      { cause: error },
    );
  });
  const first = answers[0];
  if (!first) throw new TransportError(`gRPC connection to ${target.address} failed: ${target.host} has no address`);
  const address = first.family === 6 ? `[${first.address}]:${target.port}` : `${first.address}:${target.port}`;
  return {
    ...target,
    address,
    pinnedHost: target.host,
    key: `${address}|${target.useSsl ? 'tls' : 'plain'}|${target.host}|remote`,
  };
}

/** Proxy variables grpc-js honours: with one set, grpc-js dials the proxy, so there is nothing to dial first. */
function grpcProxied(): boolean {
  const env = process.env;
  return Boolean(env.grpc_proxy || env.https_proxy || env.http_proxy || env.HTTPS_PROXY || env.HTTP_PROXY);
}

/**
 * Opens and closes one TCP connection to `address` (`host:port`, IPv6 bracketed), ended at once by `signal`. A refused
 * or failed connect resolves too: grpc-js then fails with its own status, as before.
 */
export function reachable(address: string, signal: AbortSignal): Promise<void> {
  if (grpcProxied()) return Promise.resolve();
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon).replace(/^\[|\]$/g, '');
  const port = Number(address.slice(colon + 1));
  return new Promise((resolve, reject) => {
    signal.throwIfAborted();
    const socket = connect({ host, port });
    let unsubscribe = () => {};
    const done = (error?: unknown) => {
      unsubscribe();
      socket.destroy();
      if (error) reject(error);
      else resolve();
    };
    socket.once('connect', () => done());
    socket.once('error', () => done());
    unsubscribe = onAbort(signal, (reason) => done(reason));
  });
}
