import type { Client, Metadata } from '@grpc/grpc-js';
import type { Method, Root, Service, Type } from 'protobufjs';
import { TransportError, UtcpArgumentsError, UtcpError, type ValidationIssue } from '../../core/errors.js';
import { abortError, createDeadline, scopeController } from '../../core/deadline.js';
import type { CallOptions, DiscoveryResult, Transport, TransportContext } from '../../core/transport.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { GrpcCallTemplate } from './template.js';
import { embeddedRoot } from './embedded-root.js';
import { UTCP_SERVICE_NAME, UTCP_SERVICE_PROTO } from './embedded-protos.js';
import { serverStreamCall, unaryCall, type GrpcCallOptions } from './grpc-call.js';
import { buildMetadata } from './grpc-metadata.js';
import { grpcTarget, pinGrpcTarget, reachable, type GrpcTarget } from './grpc-target.js';
import { loadByReflection } from './load-by-reflection.js';
import { loadGrpcModules, type GrpcModules } from './load-grpc.js';
import { loadProtoFile } from './load-proto-file.js';
import { TO_OBJECT_OPTIONS, jsonToMessage, responseToJson } from './proto-json.js';
import { webServerStreamCall, webUnaryCall, type WebCallOptions } from './web-call.js';
import { webWire, type WebWire } from './web-wire.js';
import { typeName } from './proto-schema.js';
import { findMethod, toolsForService } from './service-tools.js';
import { errorMessage } from '../../core/guards.js';

/** Call deadline in ms when the template's `timeout` is absent or not a positive number. */
export const DEFAULT_GRPC_TIMEOUT_MS = 30_000;

interface Deadline {
  signal: AbortSignal;
  timeoutMs: number;
  clear(): void;
}

/** What one discovery or call needs, prepared before the first byte is sent. */
interface Prepared {
  mods: GrpcModules;
  /** The grpc-js channel; absent for the HTTP/1.1 wire protocols. */
  client?: Client;
  metadata: Metadata;
  deadline: Deadline;
  /** Set for `wire_protocol` grpc-web or connect (docs/design/transports.md#grpc-wire-protocols). */
  web?: WebWire;
}

/** One RPC: its path, the encoded request and the message types at both ends. */
interface Rpc {
  path: string;
  body: Buffer;
  requestType: Type;
  responseType: Type;
  maxBytes: number;
}

/**
 * The `grpc` transport (docs/design/transports.md#grpc): the `grpcpb.UTCPService` protocol, or generic mode with
 * descriptors from server reflection or a confined `.proto` file. Channels are cached per
 * (host, port, use_ssl) in this instance and closed on deregistration or close.
 */
export class GrpcTransport implements Transport<GrpcCallTemplate> {
  readonly type = 'grpc';
  readonly #ctx: TransportContext;
  readonly #closing = scopeController();
  #mods: Promise<GrpcModules> | undefined;
  #utcpRoot: Root | undefined;
  readonly #channels = new Map<string, { client: Client; users: Set<string> }>();
  /** Generic-mode services per manual, keyed by where their descriptors came from. */
  readonly #services = new Map<string, Map<string, Promise<Service>>>();

  constructor(ctx: TransportContext) {
    this.#ctx = ctx;
  }

  async registerManual(template: GrpcCallTemplate, options: CallOptions): Promise<DiscoveryResult> {
    const target = grpcTarget(template);
    const what = `gRPC discovery of manual ${options.manualName} (${target.address})`;
    const raw = options.rawTemplate as GrpcCallTemplate;
    const prepared = await this.#prepare(template, target, options, what);
    try {
      if (serviceNameOf(template) === UTCP_SERVICE_NAME) return await this.#getManual(prepared, raw, options, what);
      this.#forgetServices(options.manualName);
      const service = await this.#service(prepared, template, target, options, what);
      const { tools, warnings } = toolsForService(service, raw);
      return { manual: { utcp_version: '1.0.0', manual_version: '1.0.0', tools }, warnings };
    } catch (error) {
      throw this.#failure(error, prepared.deadline, options, what);
    } finally {
      prepared.deadline.clear();
    }
  }

  async callTool(tool: Tool, args: JsonObject, template: GrpcCallTemplate, options: CallOptions): Promise<unknown> {
    const target = grpcTarget(template);
    const what = `gRPC tool ${tool.name}`;
    const prepared = await this.#prepare(template, target, options, what);
    try {
      if (serviceNameOf(template) === UTCP_SERVICE_NAME) {
        const body = this.#utcpRequest(prepared.mods, tool, args, template, options);
        const bytes = await this.#unary(
          prepared,
          this.#utcpRpc(prepared, 'CallTool', body, this.#ctx.limits.max_response_bytes),
          options,
          what,
        );
        return resultJson(this.#utcpType(prepared.mods, 'ToolCallResponse'), bytes);
      }
      const service = await this.#service(prepared, template, target, options, what);
      const method = findMethod(service, template.method_name || wireName(tool, options));
      const call = methodRpc(service, method, args, tool.name, this.#ctx.limits.max_response_bytes);
      if (!method.responseStream) {
        return decodeResponse(method.resolvedResponseType!, await this.#unary(prepared, call, options, what));
      }
      const items: unknown[] = [];
      let total = 0;
      for await (const bytes of this.#stream(prepared, call, options, what)) {
        total += bytes.length;
        if (total > this.#ctx.limits.max_response_bytes) {
          throw new UtcpError(
            'RESPONSE_TOO_LARGE',
            `${what}: the streamed responses exceed the ${this.#ctx.limits.max_response_bytes}-byte limit`,
          );
        }
        items.push(decodeResponse(method.resolvedResponseType!, bytes));
      }
      return items;
    } catch (error) {
      throw this.#failure(error, prepared.deadline, options, what);
    } finally {
      prepared.deadline.clear();
    }
  }

  async *callToolStream(
    tool: Tool,
    args: JsonObject,
    template: GrpcCallTemplate,
    options: CallOptions,
  ): AsyncGenerator<unknown, void, undefined> {
    const target = grpcTarget(template);
    const what = `gRPC tool ${tool.name}`;
    const prepared = await this.#prepare(template, target, options, what);
    try {
      const itemLimit = this.#ctx.limits.max_stream_item_bytes;
      if (serviceNameOf(template) === UTCP_SERVICE_NAME) {
        const body = this.#utcpRequest(prepared.mods, tool, args, template, options);
        const response = this.#utcpType(prepared.mods, 'ToolCallResponse');
        for await (const bytes of this.#stream(
          prepared,
          this.#utcpRpc(prepared, 'CallToolStream', body, itemLimit),
          options,
          what,
        )) {
          yield resultJson(response, bytes);
        }
        return;
      }
      const service = await this.#service(prepared, template, target, options, what);
      const method = findMethod(service, template.method_name || wireName(tool, options));
      const call = methodRpc(
        service,
        method,
        args,
        tool.name,
        method.responseStream ? itemLimit : this.#ctx.limits.max_response_bytes,
      );
      if (!method.responseStream) {
        yield decodeResponse(method.resolvedResponseType!, await this.#unary(prepared, call, options, what));
        return;
      }
      for await (const bytes of this.#stream(prepared, call, options, what)) {
        yield decodeResponse(method.resolvedResponseType!, bytes);
      }
    } catch (error) {
      throw this.#failure(error, prepared.deadline, options, what);
    } finally {
      prepared.deadline.clear();
    }
  }

  async deregisterManual(_template: GrpcCallTemplate, options: { manualName: string }): Promise<void> {
    this.#forgetServices(options.manualName);
    for (const [key, entry] of this.#channels) {
      entry.users.delete(options.manualName);
      if (entry.users.size === 0) {
        entry.client.close();
        this.#channels.delete(key);
      }
    }
  }

  async close(): Promise<void> {
    if (!this.#closing.signal.aborted)
      this.#closing.abort(new UtcpError('CLIENT_CLOSED', 'The grpc transport was closed'));
    for (const { client } of this.#channels.values()) client.close();
    this.#channels.clear();
    this.#services.clear();
  }

  // ------------------------------------------------------------------ grpcpb.UTCPService

  async #getManual(
    prepared: Prepared,
    raw: GrpcCallTemplate,
    options: CallOptions,
    what: string,
  ): Promise<DiscoveryResult> {
    const response = this.#utcpType(prepared.mods, 'Manual');
    const empty = encode(this.#utcpType(prepared.mods, 'Empty'), {});
    const bytes = await this.#unary(
      prepared,
      this.#utcpRpc(prepared, 'GetManual', empty, this.#ctx.limits.max_document_bytes),
      options,
      what,
    );
    const manual = response.toObject(response.decode(bytes), { defaults: true, arrays: true }) as {
      version: string;
      tools: Array<{ name: string; description: string }>;
    };
    const tools = manual.tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputs: { type: 'object' },
      outputs: {},
      tags: [],
      tool_call_template: raw,
    }));
    return { manual: { utcp_version: manual.version || '1.0.0', manual_version: '1.0.0', tools } };
  }

  #utcpRpc(
    prepared: Prepared,
    method: 'GetManual' | 'CallTool' | 'CallToolStream',
    body: Buffer,
    maxBytes: number,
  ): Rpc {
    const [request, response] =
      method === 'GetManual' ? (['Empty', 'Manual'] as const) : (['ToolCallRequest', 'ToolCallResponse'] as const);
    return {
      path: `/${UTCP_SERVICE_NAME}/${method}`,
      body,
      requestType: this.#utcpType(prepared.mods, request),
      responseType: this.#utcpType(prepared.mods, response),
      maxBytes,
    };
  }

  #utcpType(mods: GrpcModules, name: 'Empty' | 'Manual' | 'ToolCallRequest' | 'ToolCallResponse'): Type {
    this.#utcpRoot ??= embeddedRoot(mods.protobuf, UTCP_SERVICE_PROTO);
    return this.#utcpRoot.lookupType(`grpcpb.${name}`);
  }

  /** The encoded `ToolCallRequest` for a grpcpb call. */
  #utcpRequest(
    mods: GrpcModules,
    tool: Tool,
    args: JsonObject,
    template: GrpcCallTemplate,
    options: CallOptions,
  ): Buffer {
    return encode(this.#utcpType(mods, 'ToolCallRequest'), {
      tool: wireToolName(tool, template, options),
      args_json: JSON.stringify(args),
    });
  }

  // ------------------------------------------------------------------ generic mode

  /** The service's descriptors, from `proto_file` or server reflection, cached per manual and source. */
  #service(
    prepared: Prepared,
    template: GrpcCallTemplate,
    target: GrpcTarget,
    options: CallOptions,
    what: string,
  ): Promise<Service> {
    const serviceName = serviceNameOf(template);
    const protoFile = typeof template.proto_file === 'string' && template.proto_file ? template.proto_file : undefined;
    const key = JSON.stringify([
      serviceName,
      protoFile ?? null,
      protoFile ? (template.proto_include_dirs ?? null) : target.key,
    ]);
    let perManual = this.#services.get(options.manualName);
    if (!perManual) this.#services.set(options.manualName, (perManual = new Map()));
    let pending = perManual.get(key);
    if (!pending) {
      pending = (async () => {
        if (!protoFile && prepared.web) {
          throw new UtcpError(
            'INVALID_MANUAL',
            `${what}: wire_protocol "${prepared.web.protocol}" needs proto_file (server reflection is read over native gRPC only)`,
          );
        }
        const root = protoFile
          ? await loadProtoFile(prepared.mods.protobuf, this.#ctx.rootDir, protoFile, template.proto_include_dirs ?? [])
          : await loadByReflection(prepared.mods, serviceName, {
              client: prepared.client!,
              metadata: prepared.metadata,
              timeoutMs: prepared.deadline.timeoutMs,
              signal: prepared.deadline.signal,
              maxBytes: this.#ctx.limits.max_document_bytes,
              what,
              callerTimeoutMs: options.timeoutMs,
            });
        try {
          return root.lookupService(serviceName);
        } catch (cause) {
          throw new UtcpError(
            'INVALID_MANUAL',
            `${what}: service ${serviceName} is not defined${protoFile ? ` in ${protoFile}` : ''}`,
            { cause },
          );
        }
      })();
      perManual.set(key, pending);
      pending.catch(() => perManual!.delete(key));
    }
    return pending;
  }

  #forgetServices(manualName: string): void {
    this.#services.delete(manualName);
  }

  // ------------------------------------------------------------------ helpers

  async #prepare(
    template: GrpcCallTemplate,
    target: GrpcTarget,
    options: CallOptions,
    what: string,
  ): Promise<Prepared> {
    this.#assertOpen();
    const deadline = this.#deadline(options.signal, template.timeout, what);
    try {
      const mods = await this.#modules();
      const metadata = await buildMetadata(mods.grpc, template, this.#ctx, deadline.signal, options.remoteSource);
      const web = webWire(template, target, metadata);
      if (web) return { mods, metadata, deadline, web };
      const dialled = await pinGrpcTarget(target, options.remoteSource === true, deadline.signal, this.#ctx.lookup);
      // grpc-js's own connect cannot be cancelled: a close() during it kept the process alive until the system gave
      // up on the connect. A new target is dialled once here first, abortably (docs/design/threat-model.md#close-during-connect).
      if (!this.#channels.has(dialled.key)) await reachable(dialled.address, deadline.signal);
      this.#assertOpen();
      return { mods, metadata, deadline, client: this.#channel(mods, dialled, options.manualName) };
    } catch (error) {
      deadline.clear();
      throw this.#failure(error, deadline, options, what);
    }
  }

  #modules(): Promise<GrpcModules> {
    this.#mods ??= loadGrpcModules();
    this.#mods.catch(() => (this.#mods = undefined));
    return this.#mods;
  }

  #channel(mods: GrpcModules, target: GrpcTarget, manualName: string): Client {
    let entry = this.#channels.get(target.key);
    if (!entry) {
      const { grpc } = mods;
      const limits = this.#ctx.limits;
      const credentials = target.useSsl ? grpc.credentials.createSsl() : grpc.credentials.createInsecure();
      const client = new grpc.Client(target.address, credentials, {
        'grpc.max_receive_message_length': Math.max(
          limits.max_document_bytes,
          limits.max_response_bytes,
          limits.max_stream_item_bytes,
        ),
        'grpc.enable_retries': 0,
        // A pinned address still speaks TLS and HTTP/2 to the name it was resolved from.
        ...(target.pinnedHost !== undefined
          ? {
              'grpc.ssl_target_name_override': target.pinnedHost,
              'grpc.default_authority': `${target.pinnedHost}:${target.port}`,
            }
          : {}),
      });
      entry = { client, users: new Set() };
      this.#channels.set(target.key, entry);
    }
    entry.users.add(manualName);
    return entry.client;
  }

  /** One unary RPC over the template's wire protocol. */
  #unary(prepared: Prepared, rpc: Rpc, options: CallOptions, what: string): Promise<Buffer> {
    if (prepared.web) return webUnaryCall(this.#webOptions(prepared.web, prepared, rpc, options, what));
    return unaryCall(this.#callOptions(prepared, rpc, options, what));
  }

  /** One server-streaming RPC over the template's wire protocol. */
  #stream(prepared: Prepared, rpc: Rpc, options: CallOptions, what: string): AsyncGenerator<Buffer, void, undefined> {
    if (prepared.web) return webServerStreamCall(this.#webOptions(prepared.web, prepared, rpc, options, what));
    return serverStreamCall(this.#callOptions(prepared, rpc, options, what));
  }

  #webOptions(web: WebWire, prepared: Prepared, rpc: Rpc, options: CallOptions, what: string): WebCallOptions {
    return {
      ctx: this.#ctx,
      protocol: web.protocol,
      codec: web.codec,
      url: `${web.baseUrl}${rpc.path}`,
      request: rpc.body,
      requestType: rpc.requestType,
      responseType: rpc.responseType,
      headers: web.headers,
      timeoutMs: prepared.deadline.timeoutMs,
      signal: prepared.deadline.signal,
      maxMessageBytes: rpc.maxBytes,
      what,
      callerTimeoutMs: options.timeoutMs,
      remoteSource: options.remoteSource === true,
    };
  }

  #callOptions(prepared: Prepared, rpc: Rpc, options: CallOptions, what: string): GrpcCallOptions {
    return {
      grpc: prepared.mods.grpc,
      client: prepared.client!,
      path: rpc.path,
      request: rpc.body,
      metadata: prepared.metadata,
      timeoutMs: prepared.deadline.timeoutMs,
      signal: prepared.deadline.signal,
      maxMessageBytes: rpc.maxBytes,
      maxBufferedBytes: this.#ctx.limits.max_response_bytes,
      what,
      callerTimeoutMs: options.timeoutMs,
    };
  }

  #assertOpen(): void {
    if (this.#closing.signal.aborted) throw new UtcpError('CLIENT_CLOSED', 'The grpc transport was closed');
  }

  /** Caller signal + close + template timeout (which also becomes the gRPC deadline). */
  #deadline(parent: AbortSignal, timeout: unknown, what: string): Deadline {
    const timeoutMs =
      typeof timeout === 'number' && Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_GRPC_TIMEOUT_MS;
    const deadline = createDeadline([parent, this.#closing.signal], timeoutMs, what);
    return { signal: deadline.signal, timeoutMs, clear: () => deadline.dispose() };
  }

  #failure(error: unknown, deadline: Deadline, options: CallOptions, what: string): unknown {
    if (error instanceof UtcpError) return error;
    if (deadline.signal.aborted) return abortError(deadline.signal, what, options.timeoutMs);
    const reason = errorMessage(error);
    return new TransportError(`${what} failed: ${reason}`, { cause: error });
  }
}

function serviceNameOf(template: GrpcCallTemplate): string {
  return typeof template.service_name === 'string' && template.service_name ? template.service_name : UTCP_SERVICE_NAME;
}

function wireName(tool: Tool, options: CallOptions): string {
  const prefix = `${options.manualName}.`;
  return tool.name.startsWith(prefix) ? tool.name.slice(prefix.length) : tool.name;
}

/** `bare` (default) or `qualified` (`<manual>.<tool>`) for go-era servers. */
function wireToolName(tool: Tool, template: GrpcCallTemplate, options: CallOptions): string {
  const bare = wireName(tool, options);
  return template.tool_name_on_wire === 'qualified' ? `${options.manualName}.${bare}` : bare;
}

function methodRpc(service: Service, method: Method, args: JsonObject, toolName: string, maxBytes: number): Rpc {
  return {
    path: `/${typeName(service)}/${method.name}`,
    body: encodeRequest(method, args, toolName),
    requestType: method.resolvedRequestType!,
    responseType: method.resolvedResponseType!,
    maxBytes,
  };
}

function encode(type: Type, value: Record<string, unknown>): Buffer {
  const bytes = type.encode(type.fromObject(value)).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Arguments → request bytes via the protobuf JSON mapping. @throws UtcpArgumentsError listing every problem. */
function encodeRequest(method: Method, args: JsonObject, toolName: string): Buffer {
  const type = method.resolvedRequestType!;
  const issues: ValidationIssue[] = [];
  const object = jsonToMessage(type, args, '', issues);
  if (issues.length > 0) throw new UtcpArgumentsError(toolName, issues);
  try {
    return encode(type, object);
  } catch (cause) {
    throw new UtcpArgumentsError(toolName, [
      { path: '(arguments)', message: `cannot be encoded as ${typeName(type)}: ${(cause as Error).message}` },
    ]);
  }
}

function decodeResponse(type: Type, bytes: Buffer): unknown {
  let decoded;
  try {
    decoded = type.decode(bytes);
  } catch (cause) {
    throw new UtcpError('PROTOCOL_ERROR', `The gRPC response is not a valid ${typeName(type)} message`, { cause });
  }
  return responseToJson(type, type.toObject(decoded, TO_OBJECT_OPTIONS));
}

/** `result_json`: empty → null, JSON when it parses, else the text. */
function resultJson(type: Type, bytes: Buffer): unknown {
  let text: string;
  try {
    text = (type.toObject(type.decode(bytes), { defaults: true }) as { result_json: string }).result_json;
  } catch (cause) {
    throw new UtcpError('PROTOCOL_ERROR', 'The gRPC response is not a valid grpcpb.ToolCallResponse', { cause });
  }
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
