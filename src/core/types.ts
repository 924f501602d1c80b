/**
 * The UTCP data model: manuals, tools, auth objects and the call template union.
 * Wire fields keep the spec's snake_case; see docs/design/manual-format.md.
 */

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: unknown };

/** An open JSON Schema object; every key is kept. */
export type JsonSchema = { [key: string]: unknown };

// ---------------------------------------------------------------- auth

export interface ApiKeyAuth {
  auth_type: 'api_key';
  api_key: string;
  /** @default "X-Api-Key" */
  var_name?: string;
  /** @default "header" */
  location?: 'header' | 'query' | 'cookie';
}

export interface BasicAuth {
  auth_type: 'basic';
  username: string;
  password: string;
}

export interface OAuth2Auth {
  auth_type: 'oauth2';
  token_url: string;
  client_id: string;
  client_secret: string;
  scope?: string | null;
  refresh_token?: string | null;
}

/** A user-obtained token (compatibility with the official TypeScript SDK). */
export interface OAuth2UserAuth {
  auth_type: 'oauth2_user';
  access_token: string;
  /** @default "Authorization" */
  var_name?: string;
  /** @default "Bearer " */
  prefix?: string;
  [informational: string]: unknown;
}

export type Auth = ApiKeyAuth | BasicAuth | OAuth2Auth | OAuth2UserAuth;

// ---------------------------------------------------------------- call templates

export interface CallTemplateBase {
  /** Manual name (manual role). Sanitised at registration. */
  name?: string;
  call_template_type: string;
  auth?: Auth | null;
  allowed_communication_protocols?: string[] | null;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

/** Operation filter for OpenAPI conversion (docs/design/openapi.md#filters). */
export interface OpenApiFilter {
  include_tags?: string[];
  exclude_tags?: string[];
  include_paths?: string[];
  exclude_paths?: string[];
  include_methods?: string[];
  exclude_methods?: string[];
  include_operation_ids?: string[];
  exclude_operation_ids?: string[];
}

export interface HttpCallTemplate extends CallTemplateBase {
  call_template_type: 'http';
  url: string;
  /** @default "GET" */
  http_method?: HttpMethod;
  /** @default "application/json" */
  content_type?: string;
  headers?: Record<string, string> | null;
  /** @default "body" */
  body_field?: string | null;
  header_fields?: string[] | null;
  cookie_fields?: string[] | null;
  auth_tools?: Auth | null;
  /** Call timeout in milliseconds. @default 30000 */
  timeout?: number;
  openapi_filter?: OpenApiFilter | null;
}

export interface SseCallTemplate extends CallTemplateBase {
  call_template_type: 'sse';
  url: string;
  event_type?: string | null;
  /** @default true */
  reconnect?: boolean;
  /** Total reconnect budget in milliseconds. @default 30000 */
  retry_timeout?: number;
  headers?: Record<string, string> | null;
  body_field?: string | null;
  header_fields?: string[] | null;
}

export interface StreamableHttpCallTemplate extends CallTemplateBase {
  call_template_type: 'streamable_http';
  url: string;
  /** @default "GET" */
  http_method?: 'GET' | 'POST';
  /** @default "application/octet-stream" */
  content_type?: string;
  /** @default 4096 */
  chunk_size?: number;
  /** Whole request in milliseconds. @default 60000 */
  timeout?: number;
  headers?: Record<string, string> | null;
  body_field?: string | null;
  header_fields?: string[] | null;
}

export interface CommandStep {
  command: string;
  append_to_final_output?: boolean | null;
}

export interface CliCallTemplate extends CallTemplateBase {
  call_template_type: 'cli';
  commands: CommandStep[];
  env_vars?: Record<string, string> | null;
  inherit_env_vars?: string[] | null;
  working_dir?: string | null;
  /** Call timeout in milliseconds. @default 120000 */
  timeout?: number;
}

export interface McpServerConfig {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  transport?: 'stdio' | 'http' | 'streamable-http' | 'sse';
  headers?: Record<string, string>;
  /** Per request, in seconds. @default 30 */
  timeout?: number;
  [ignored: string]: unknown;
}

export interface McpCallTemplate extends CallTemplateBase {
  call_template_type: 'mcp';
  config: { mcpServers: Record<string, McpServerConfig> };
  register_resources_as_tools?: boolean;
}

export interface TextCallTemplate extends CallTemplateBase {
  call_template_type: 'text';
  content: string;
  base_url?: string | null;
  auth_tools?: Auth | null;
  openapi_filter?: OpenApiFilter | null;
}

export interface FileCallTemplate extends CallTemplateBase {
  call_template_type: 'file';
  file_path: string;
  base_url?: string | null;
  auth_tools?: Auth | null;
  openapi_filter?: OpenApiFilter | null;
}

export interface WebSocketCallTemplate extends CallTemplateBase {
  call_template_type: 'websocket';
  url: string;
  message?: string | JsonObject | unknown[] | null;
  protocol?: string | null;
  keep_alive?: boolean;
  response_format?: 'json' | 'text' | 'raw' | null;
  /** In seconds. @default 30 */
  timeout?: number;
  headers?: Record<string, string> | null;
  header_fields?: string[] | null;
  discovery_message?: string | JsonObject | null;
  tool_routing?: 'single_socket' | 'path_per_tool';
  response_mode?: 'first_message' | 'until_close';
}

export interface SocketRequestOptions {
  request_data_format?: 'json' | 'text';
  request_data_template?: string | null;
  response_byte_format?: string | null;
  /** In milliseconds. @default 30000 */
  timeout?: number;
  request_wrapper?: 'none' | 'tool_args';
  tool_name_on_wire?: 'bare' | 'qualified';
  discovery_message?: string | JsonObject | null;
}

export interface TcpCallTemplate extends CallTemplateBase, SocketRequestOptions {
  call_template_type: 'tcp';
  host: string;
  port: number;
  framing_strategy?: 'stream' | 'length_prefix' | 'delimiter' | 'fixed_length' | 'json' | 'ndjson';
  length_prefix_bytes?: 1 | 2 | 4 | 8;
  length_prefix_endian?: 'big' | 'little';
  message_delimiter?: string;
  interpret_escape_sequences?: boolean;
  fixed_message_length?: number | null;
  max_response_size?: number;
  half_close?: boolean;
}

export interface UdpCallTemplate extends CallTemplateBase, SocketRequestOptions {
  call_template_type: 'udp';
  host: string;
  port: number;
  /** 0 = fire-and-forget. @default 1 */
  number_of_response_datagrams?: number;
}

export interface GraphqlCallTemplate extends CallTemplateBase {
  call_template_type: 'graphql';
  url: string;
  operation_type?: 'query' | 'mutation' | 'subscription';
  operation_name?: string | null;
  headers?: Record<string, string> | null;
  header_fields?: string[] | null;
  query?: string | null;
  variable_types?: Record<string, string> | null;
  subscription_url?: string | null;
  /** In milliseconds. @default 30000 */
  timeout?: number;
}

export interface GrpcCallTemplate extends CallTemplateBase {
  call_template_type: 'grpc';
  host: string;
  port: number;
  use_ssl?: boolean;
  /** @default "grpcpb.UTCPService" */
  service_name?: string;
  method_name?: string | null;
  proto_file?: string | null;
  metadata?: Record<string, string> | null;
  /** In milliseconds. @default 30000 */
  timeout?: number;
  tool_name_on_wire?: 'bare' | 'qualified';
  transport?: 'grpc';
}

/** An in-process function registered on this client (see `UtcpClient.registerFunctions`). */
export interface DirectCallTemplate extends CallTemplateBase {
  call_template_type: 'direct';
  /** The registered callable; absent on a manual template (discovery lists the manual's functions). */
  callable_name?: string | null;
}

export type CallTemplate =
  | HttpCallTemplate
  | SseCallTemplate
  | StreamableHttpCallTemplate
  | CliCallTemplate
  | McpCallTemplate
  | TextCallTemplate
  | FileCallTemplate
  | WebSocketCallTemplate
  | TcpCallTemplate
  | UdpCallTemplate
  | GraphqlCallTemplate
  | GrpcCallTemplate
  | DirectCallTemplate;

export type CallTemplateType = CallTemplate['call_template_type'];

export const BUILTIN_CALL_TEMPLATE_TYPES: readonly CallTemplateType[] = [
  'http', 'sse', 'streamable_http', 'cli', 'mcp', 'text', 'file',
  'websocket', 'tcp', 'udp', 'graphql', 'grpc', 'direct',
];

// ---------------------------------------------------------------- manual and tool

export interface Tool {
  /** Full name once registered: `<manual>.<tool>`. */
  name: string;
  description: string;
  inputs: JsonSchema;
  outputs: JsonSchema;
  tags: string[];
  average_response_size?: number | null;
  /** Raw (unsubstituted) template. */
  tool_call_template: CallTemplateBase;
}

export interface UtcpManual {
  utcp_version: string;
  manual_version: string;
  tools: Tool[];
}

/** Outcome of one manual registration. Templates in it are raw: they never hold secret values. */
export interface RegisterManualResult {
  manualCallTemplate: CallTemplateBase;
  manual: UtcpManual;
  success: boolean;
  errors: string[];
  /** Non-fatal problems: skipped tools or operations, failed servers, dropped tools. */
  warnings: string[];
}

export function assertNever(value: never, what = 'value'): never {
  throw new Error(`Unhandled ${what}: ${JSON.stringify(value)}`);
}
