import type { Root } from 'protobufjs';
import type { Protobuf } from './load-grpc.js';

/** Parses an embedded .proto text (proto field names kept) into a resolved protobufjs Root. */
export function embeddedRoot(protobuf: Protobuf, text: string): Root {
  const root = protobuf.parse(text, { keepCase: true }).root;
  root.resolveAll();
  return root;
}
