import { UrlPolicyError, UtcpError } from '../../core/errors.js';
import type { GrpcCallTemplate } from './template.js';
import { isLoopbackLiteral } from '../../core/url-policy.js';

export interface GrpcTarget {
  /** `host:port`, IPv6 hosts bracketed: what grpc-js dials. */
  address: string;
  useSsl: boolean;
  /** Channel cache key: (host, port, use_ssl). */
  key: string;
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
  return { address, useSsl, key: `${address}|${useSsl ? 'tls' : 'plain'}` };
}
