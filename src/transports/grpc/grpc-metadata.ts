import type { Metadata } from '@grpc/grpc-js';
import { UtcpError } from '../../core/errors.js';
import type { TransportContext } from '../../core/transport.js';
import type { GrpcCallTemplate } from './template.js';
import { assertHeaderSafe } from '../../core/url-policy.js';
import { resolveAuth } from '../../http/auth.js';
import type { Grpc } from './load-grpc.js';

const METADATA_KEY = /^[0-9a-z_.-]+$/;

function add(metadata: Metadata, name: string, value: string): void {
  assertHeaderSafe(name, value);
  const key = name.toLowerCase();
  if (!METADATA_KEY.test(key) || key.endsWith('-bin') || key.startsWith('grpc-')) {
    throw new UtcpError(
      'INVALID_MANUAL',
      `gRPC metadata key ${JSON.stringify(name)} is not allowed (lowercase letters, digits, "-", "_", "."; no "grpc-" prefix or "-bin" suffix)`,
    );
  }
  metadata.set(key, value);
}

/**
 * The call metadata: the template's `metadata` map, then auth (docs/design/transports.md#grpc): api_key (header
 * location only) under its lowercased `var_name`, basic as `authorization: Basic …`, oauth2 and
 * oauth2_user as `authorization: Bearer …`. Username and password are never sent as separate keys.
 * @throws UtcpError HEADER_INJECTION on CR/LF/NUL, INVALID_MANUAL on an unusable key or api_key location.
 */
export async function buildMetadata(
  grpc: Grpc,
  template: GrpcCallTemplate,
  ctx: TransportContext,
  signal: AbortSignal,
  remoteSource = false,
): Promise<Metadata> {
  const metadata = new grpc.Metadata();
  for (const [name, value] of Object.entries(template.metadata ?? {})) {
    if (typeof value !== 'string') throw new UtcpError('INVALID_MANUAL', `gRPC metadata ${name} must be a string`);
    add(metadata, name, value);
  }
  const auth = template.auth;
  if (auth?.auth_type === 'api_key' && (auth.location ?? 'header') !== 'header') {
    throw new UtcpError(
      'INVALID_MANUAL',
      `gRPC api_key auth must use location "header" (got "${String(auth.location)}")`,
    );
  }
  const material = await resolveAuth(auth, ctx, signal, remoteSource);
  for (const [name, value] of Object.entries(material.headers)) add(metadata, name, value);
  return metadata;
}
