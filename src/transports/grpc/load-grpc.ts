import { createRequire } from 'node:module';
import type * as GrpcJs from '@grpc/grpc-js';
import type * as ProtobufJs from 'protobufjs';
import { UtcpError } from '../../core/errors.js';

export type Grpc = typeof GrpcJs;
export type Protobuf = typeof ProtobufJs;

/** The protobufjs descriptor extension: FileDescriptorProto codecs and `Root.fromDescriptor`. */
export interface DescriptorExt {
  FileDescriptorProto: ProtobufJs.Type;
  FileDescriptorSet: ProtobufJs.Type;
}

export interface GrpcModules {
  grpc: Grpc;
  protobuf: Protobuf;
  descriptor: DescriptorExt;
}

/** Both libraries in one command, whichever is missing (docs/design/packaging.md#missing-library). */
function missing(pkg: string, cause: unknown): UtcpError {
  return new UtcpError(
    'DEPENDENCY_MISSING',
    `The grpc transport needs @grpc/grpc-js and protobufjs (${pkg} is missing): npm install @grpc/grpc-js protobufjs`,
    { cause },
  );
}

/**
 * Loads @grpc/grpc-js and protobufjs (with its descriptor extension) on first use.
 * @throws UtcpError DEPENDENCY_MISSING naming the package to install.
 */
export async function loadGrpcModules(): Promise<GrpcModules> {
  let grpc: Grpc;
  try {
    grpc = await import('@grpc/grpc-js');
  } catch (cause) {
    throw missing('@grpc/grpc-js', cause);
  }
  let protobuf: Protobuf;
  let descriptor: DescriptorExt;
  try {
    const mod = (await import('protobufjs')) as unknown as { default?: Protobuf } & Protobuf;
    protobuf = mod.default ?? mod;
    const ext = (await import('protobufjs/ext/descriptor/index.js')) as unknown as {
      default?: DescriptorExt;
    } & DescriptorExt;
    descriptor = ext.default ?? ext;
    addCommonProtos(protobuf);
  } catch (cause) {
    throw missing('protobufjs', cause);
  }
  return { grpc, protobuf, descriptor };
}

/**
 * protobufjs bundles only some google/protobuf files; register the rest it ships as JSON
 * (as @grpc/proto-loader does), so protos importing e.g. descriptor.proto for custom options load.
 */
function addCommonProtos(protobuf: Protobuf): void {
  const require = createRequire(import.meta.url);
  for (const name of ['api', 'descriptor', 'source_context', 'type']) {
    if (`google/protobuf/${name}.proto` in protobuf.common) continue;
    const json = require(`protobufjs/google/protobuf/${name}.json`) as {
      nested: { google: { nested: { protobuf: { nested: Record<string, unknown> } } } };
    };
    protobuf.common(name, json.nested.google.nested.protobuf.nested);
  }
}
