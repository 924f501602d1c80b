import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { GrpcCallTemplate } from '../../src/index.js';
import { FIXTURES } from '../fixtures/grpc/grpc-server.js';
import { callOptions, discover, grpcServer, grpcTransport, template } from './grpc-helpers.js';

const SERVICE = 'demo.v1.Calculator';

async function tempRoot(): Promise<{ outer: string; root: string }> {
  const outer = await mkdtemp(join(tmpdir(), 'utcp-grpc-'));
  onTestFinished(() => rm(outer, { recursive: true, force: true }));
  const root = join(outer, 'root');
  await mkdir(root);
  await writeFile(
    join(outer, 'outside.proto'),
    'syntax = "proto3";\npackage outside;\nmessage Secret { string s = 1; }\n',
  );
  return { outer, root };
}

const SERVICE_PROTO = (imports: string) => `syntax = "proto3";
package t;
${imports}
service S { rpc M(Req) returns (Req); }
message Req { string s = 1; }
`;

describe('grpc generic mode with proto_file', () => {
  it('discovers from the .proto file and its imports without reflection, with comments as descriptions', async () => {
    const server = await grpcServer({ reflection: 'none' });
    const { transport } = grpcTransport({ rootDir: FIXTURES });
    const raw = template(server.port, { service_name: SERVICE, proto_file: 'demo/demo.proto' });
    const found = await discover(transport, raw);
    expect(found.tools.map((t) => t.name)).toEqual(['Add', 'Echo', 'Count', 'Fail', 'Hang', 'Now']);
    expect(found.tool('Add').description).toBe(`${SERVICE}/Add\nAdds two numbers.`);
    expect(found.tool('Echo').inputs).toMatchObject({
      properties: { point: { $ref: '#/$defs/common.Point' }, counts: { type: 'object' } },
    });
    expect(server.reflectionRequests).toEqual([]);
    expect(server.calls).toEqual([]);
  });

  it('calls methods with the descriptors from the file', async () => {
    const server = await grpcServer({ reflection: 'none' });
    const { transport } = grpcTransport({ rootDir: FIXTURES });
    const raw = template(server.port, { service_name: SERVICE, proto_file: 'demo/demo.proto' });
    const found = await discover(transport, raw);
    const echo = found.tool('Echo');
    const result = await transport.callTool(
      echo,
      { counts: { a: 1 }, extra: { k: [1, 'v'] }, at: '2020-05-06T07:08:09Z' },
      echo.tool_call_template as GrpcCallTemplate,
      callOptions(raw),
    );
    expect(result).toMatchObject({ counts: { a: 1 }, extra: { k: [1, 'v'] }, at: '2020-05-06T07:08:09Z' });
    expect(server.calls[0]).toMatchObject({ method: 'Echo', request: { counts: { a: 1 } } });
  });

  it('fails registration when the service is not in the file', async () => {
    const { transport } = grpcTransport({ rootDir: FIXTURES });
    const raw = template(50051, { service_name: 'demo.v1.Other', proto_file: 'demo/demo.proto' });
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toThrow(
      /demo\.v1\.Other is not defined in demo\/demo\.proto/,
    );
  });

  it.each(['../utcp.proto', '/etc/passwd', '../../../../../../etc/passwd'])(
    'rejects proto_file %s outside the root directory',
    async (protoFile) => {
      const { transport } = grpcTransport({ rootDir: join(FIXTURES, 'demo') });
      const raw = template(50051, { service_name: SERVICE, proto_file: protoFile });
      await expect(transport.registerManual(raw, callOptions(raw))).rejects.toMatchObject({ code: 'PATH_NOT_ALLOWED' });
    },
  );

  it('rejects a proto_file symlink that points outside the root directory', async () => {
    const { outer, root } = await tempRoot();
    await symlink(join(outer, 'outside.proto'), join(root, 'link.proto'));
    const { transport } = grpcTransport({ rootDir: root });
    const raw = template(50051, { service_name: 'outside.Secret', proto_file: 'link.proto' });
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toMatchObject({ code: 'PATH_NOT_ALLOWED' });
  });

  it('rejects an import that escapes the root directory', async () => {
    const { root } = await tempRoot();
    await writeFile(join(root, 'main.proto'), SERVICE_PROTO('import "../outside.proto";'));
    const { transport } = grpcTransport({ rootDir: root });
    const raw = template(50051, { service_name: 't.S', proto_file: 'main.proto' });
    const error = (await transport.registerManual(raw, callOptions(raw)).catch((e: unknown) => e)) as Error;
    expect(error).toMatchObject({ code: 'PATH_NOT_ALLOWED' });
    expect(error.message).toContain('../outside.proto');
  });

  it('rejects an import through a symlink that leaves the root directory', async () => {
    const { outer, root } = await tempRoot();
    await symlink(join(outer, 'outside.proto'), join(root, 'dep.proto'));
    await writeFile(join(root, 'main.proto'), SERVICE_PROTO('import "dep.proto";'));
    const { transport } = grpcTransport({ rootDir: root });
    const raw = template(50051, { service_name: 't.S', proto_file: 'main.proto' });
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toMatchObject({ code: 'PATH_NOT_ALLOWED' });
  });

  it('resolves imports from the proto file directory', async () => {
    const { root } = await tempRoot();
    await mkdir(join(root, 'protos', 'lib'), { recursive: true });
    await writeFile(
      join(root, 'protos', 'lib', 'dep.proto'),
      'syntax = "proto3";\npackage lib;\nmessage Dep { int64 n = 1; }\n',
    );
    await writeFile(
      join(root, 'protos', 'main.proto'),
      `syntax = "proto3";\npackage t;\nimport "lib/dep.proto";\nservice S { rpc M(lib.Dep) returns (lib.Dep); }\n`,
    );
    const { transport } = grpcTransport({ rootDir: root });
    const raw = template(50051, { service_name: 't.S', proto_file: 'protos/main.proto' });
    const found = await discover(transport, raw);
    expect(found.tool('M').inputs).toMatchObject({ properties: { n: { type: ['string', 'integer'] } } });
  });

  it('fails registration for a missing import', async () => {
    const { root } = await tempRoot();
    await writeFile(join(root, 'main.proto'), SERVICE_PROTO('import "missing.proto";'));
    const { transport } = grpcTransport({ rootDir: root });
    const raw = template(50051, { service_name: 't.S', proto_file: 'main.proto' });
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toMatchObject({ code: 'INVALID_MANUAL' });
  });

  it('fails registration for a file that does not parse', async () => {
    const { root } = await tempRoot();
    await writeFile(join(root, 'main.proto'), 'syntax = "proto3";\nmessage {{{ broken');
    const { transport } = grpcTransport({ rootDir: root });
    const raw = template(50051, { service_name: 't.S', proto_file: 'main.proto' });
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toMatchObject({ code: 'INVALID_MANUAL' });
  });

  it('fails registration for a missing proto_file', async () => {
    const { root } = await tempRoot();
    const { transport } = grpcTransport({ rootDir: root });
    const raw = template(50051, { service_name: 't.S', proto_file: 'nope.proto' });
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toThrow(/nope\.proto does not exist/);
  });
});

/** A Google-style layout (docs/design/transports.md#grpc-proto-imports): googleapis' annotations imported from a nested service proto. */
const HTTP_PROTO = `syntax = "proto3";
package google.api;
message Http { repeated HttpRule rules = 1; }
message HttpRule {
  string selector = 1;
  oneof pattern { string get = 2; string put = 3; string post = 4; string delete = 5; string patch = 6; }
  string body = 7;
}
`;
const ANNOTATIONS_PROTO = `syntax = "proto3";
package google.api;
import "google/api/http.proto";
import "google/protobuf/descriptor.proto";
extend google.protobuf.MethodOptions { HttpRule http = 72295728; }
`;
const LIBRARY_PROTO = `syntax = "proto3";
package google.example.library.v1;
import "google/api/annotations.proto";
import "google/protobuf/empty.proto";
import "google/protobuf/timestamp.proto";
service LibraryService {
  // Gets a shelf.
  rpc GetShelf(GetShelfRequest) returns (Shelf) { option (google.api.http) = { get: "/v1/{name=shelves/*}" }; }
  rpc DeleteShelf(GetShelfRequest) returns (google.protobuf.Empty) { option (google.api.http).delete = "/v1/{name=shelves/*}"; }
}
message GetShelfRequest { string name = 1; }
message Shelf { string name = 1; string theme = 2; google.protobuf.Timestamp created = 3; }
`;

async function googleLayout(base: string): Promise<void> {
  await mkdir(join(base, 'google', 'api'), { recursive: true });
  await writeFile(join(base, 'google', 'api', 'http.proto'), HTTP_PROTO);
  await writeFile(join(base, 'google', 'api', 'annotations.proto'), ANNOTATIONS_PROTO);
}

describe('grpc proto_file imports against include roots', () => {
  it('resolves google/api/annotations.proto from the root directory for a nested service proto (no configuration)', async () => {
    const { root } = await tempRoot();
    await googleLayout(root);
    await mkdir(join(root, 'google', 'example', 'library', 'v1'), { recursive: true });
    await writeFile(join(root, 'google', 'example', 'library', 'v1', 'library.proto'), LIBRARY_PROTO);
    const { transport } = grpcTransport({ rootDir: root });
    const raw = template(50051, {
      service_name: 'google.example.library.v1.LibraryService',
      proto_file: 'google/example/library/v1/library.proto',
    });
    const found = await discover(transport, raw);
    expect(found.tool('GetShelf').inputs).toMatchObject({ properties: { name: { type: 'string' } } });
    expect(found.tool('GetShelf').outputs).toMatchObject({ properties: { created: { type: 'string' } } });
    expect(found.tool('DeleteShelf')).toBeDefined();
  });

  it('searches proto_include_dirs first, like protoc -I (googleapis vendored under third_party)', async () => {
    const { root } = await tempRoot();
    await googleLayout(join(root, 'third_party', 'googleapis'));
    await mkdir(join(root, 'src', 'library', 'v1'), { recursive: true });
    await writeFile(join(root, 'src', 'library', 'v1', 'library.proto'), LIBRARY_PROTO);
    const { transport } = grpcTransport({ rootDir: root });
    const without = template(50051, {
      service_name: 'google.example.library.v1.LibraryService',
      proto_file: 'src/library/v1/library.proto',
    });
    const error = (await transport.registerManual(without, callOptions(without)).catch((e: unknown) => e)) as Error;
    expect(error).toMatchObject({ code: 'INVALID_MANUAL' });
    expect(error.message).toMatch(
      /google\/api\/annotations\.proto does not exist in the include roots \(src\/library\/v1, \.\)/,
    );
    const raw = template(50051, {
      service_name: 'google.example.library.v1.LibraryService',
      proto_file: 'src/library/v1/library.proto',
      proto_include_dirs: ['third_party/googleapis'],
    } as Partial<GrpcCallTemplate>);
    const found = await discover(transport, raw);
    expect(found.tool('GetShelf')).toBeDefined();
  });

  it('rejects an include dir outside the root directory', async () => {
    const { root } = await tempRoot();
    await writeFile(join(root, 'main.proto'), SERVICE_PROTO('import "outside.proto";'));
    const { transport } = grpcTransport({ rootDir: root });
    const raw = template(50051, {
      service_name: 't.S',
      proto_file: 'main.proto',
      proto_include_dirs: ['..'],
    } as Partial<GrpcCallTemplate>);
    await expect(transport.registerManual(raw, callOptions(raw))).rejects.toMatchObject({ code: 'PATH_NOT_ALLOWED' });
  });
});
