/**
 * The option and wiring types of the UTCP client (`src/core/client.ts` re-exports them), in a module of their own
 * so the client's parts (docs/design/README.md#client-layout) share them without an import circle.
 */
import type { LookupFunction } from 'node:net';
import type { UtcpClientConfig } from './config.js';
import type { Logger } from './logger.js';
import type { PostProcessorFn } from './post-processors.js';
import type { ResilienceConfig } from './resilience.js';
import type { ToolRepository } from './repository.js';
import type { TransportEntry } from './template-registry.js';
import type { CallGate, DirectCallable, OpenApiConverter, ProgressEvent } from './transport.js';
import type { JsonSchema } from './types.js';
import type { VariableSource } from './variables.js';

/** Options for one tool call. */
export interface CallToolOptions {
  /** Cancels the call (and closes its sockets, kills its processes). */
  signal?: AbortSignal;
  /** Deadline for this call, in milliseconds. @default the client's `timeoutMs`, else the transport's own default */
  timeoutMs?: number;
  /** Receives progress notifications when the protocol has them. */
  onProgress?: (event: ProgressEvent) => void;
  /**
   * Return the protocol's own result envelope unmapped, where it has one: for MCP tools the `CallToolResult`
   * (`content`, `structuredContent`, `isError`; an `isError` result is returned, not thrown). Other protocols
   * ignore it. Post-processors still apply. @default false
   */
  raw?: boolean;
  /**
   * Tracing of this call (docs/design/observability.md#tool-spans): `toolCallId` becomes `gen_ai.tool.call.id`;
   * `parentContext`, an OpenTelemetry `Context`, parents the call's span (otherwise the active context does).
   * Ignored when nothing traces.
   */
  tracing?: { toolCallId?: string; parentContext?: unknown };
  /**
   * Decides the tool calls this call makes on behalf of the caller (a code-mode script's calls): handed to `direct`
   * functions as `context.callGate` (docs/design/code-mode.md#approvals). Other transports ignore it.
   */
  callGate?: CallGate;
}

/** Options for one manual registration. */
export interface RegisterOptions {
  signal?: AbortSignal;
  /** Deadline for discovery, in milliseconds. @default the transport's own discovery timeout */
  timeoutMs?: number;
  /** On a shared repository, discover again even when the stored manual is still fresh (see docs/design/repository-postgres.md). */
  refresh?: boolean;
}

/** A function to expose as a tool (see `registerFunctions`). */
export interface DirectFunction {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. @default {} */
  inputs?: JsonSchema;
  outputs?: JsonSchema;
  tags?: string[];
  handler: DirectCallable;
}

/** Wiring and behaviour that is not part of the UTCP config. */
export interface UtcpClientOptions {
  /** Anchors relative paths (file manuals, dotenv, CLI working_dir, MCP cwd, .proto files). @default process.cwd() */
  rootDir?: string;
  /**
   * Add or replace transports by call_template_type: a factory, or a definition with the template spec
   * (docs/design/adding-a-transport.md). @default the built-in set
   */
  transports?: Record<string, TransportEntry>;
  /** Default deadline per call, in milliseconds. @default none: each transport applies its own protocol default */
  timeoutMs?: number;
  /** Validate arguments against each tool's `inputs` before any transport runs. @default true */
  validateArguments?: boolean;
  /** Extra variable sources, after config `variables` and `load_variables_from`, before the environment. */
  variableSources?: VariableSource[];
  /** Functions applied to every result after the config's post-processors. */
  postProcessors?: PostProcessorFn[];
  /** Receives diagnostics. @default silent */
  logger?: Logger;
  /** Replaces the tool repository. @default in-memory with the configured search strategy */
  repository?: ToolRepository;
  /** Environment used for variable lookup. @default process.env */
  env?: NodeJS.ProcessEnv;
  /**
   * Resolves host names for every connection this client opens (HTTP family, WebSocket, TCP, UDP),
   * with `dns.lookup`'s signature. The dial guard checks its answers. @default dns.lookup
   */
  lookup?: LookupFunction;
  /**
   * Contain the process trees of cli tools and MCP stdio servers with a PID namespace (Linux, via `unshare` or
   * `bwrap`, probed once): when the command ends or the client closes, the kernel ends every process it started,
   * including ones that left the process group. `false` keeps only the process-group and marker containment
   * (docs/design/threat-model.md#process-trees). @default true
   */
  pidNamespaces?: boolean;
  /**
   * Retries, circuit breaker and concurrency limit of tool calls, in the config's shape (snake_case keys); each
   * field given here wins over the config's `resilience` (docs/design/resilience.md#config). @default 2 retries of
   * retryable HTTP calls, no breaker, no concurrency limit
   */
  resilience?: ResilienceConfig;
}

/** What the composition root gets to build the configured repository. */
export interface RepositoryContext {
  rootDir: string;
  logger: Required<Logger>;
  /** Substitutes `${VAR}` references from the client's variables, dotenv files and environment. */
  resolveValue(value: string): string;
}

/** What the composition root supplies. */
export interface ClientDefaults {
  transports: Record<string, TransportEntry>;
  createRepository(config: UtcpClientConfig, context: RepositoryContext): ToolRepository;
  convertOpenApi: OpenApiConverter;
}
