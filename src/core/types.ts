/**
 * The UTCP data model: manuals, tools, auth objects and the base of every call template. The fields of each
 * `call_template_type` are owned by its transport (`src/transports/<type>/template.ts`).
 * Wire fields keep the spec's snake_case; see docs/design/manual-format.md.
 */
import type { ResilienceConfig } from './resilience.js';
import type { UtcpErrorCode } from './errors.js';

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

/** The fields every call template has (docs/design/manual-format.md#template-base). */
export interface CallTemplateBase {
  /** Manual name (manual role). Sanitised at registration. */
  name?: string;
  call_template_type: string;
  auth?: Auth | null;
  allowed_communication_protocols?: string[] | null;
  /** *ext.* Retries, circuit breaker and concurrency limit for the calls of this manual or tool (docs/design/resilience.md#config). */
  resilience?: ResilienceConfig | null;
}

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
  /**
   * The `code` of the typed error that failed the registration, when one did: e.g. `DEPENDENCY_MISSING` when the
   * protocol's library is not installed, whose message in `errors` names the `npm install` command
   * (docs/design/packaging.md#missing-library).
   */
  errorCode?: UtcpErrorCode;
  /** Non-fatal problems: skipped tools or operations, failed servers, dropped tools. */
  warnings: string[];
}

export function assertNever(value: never, what = 'value'): never {
  throw new Error(`Unhandled ${what}: ${JSON.stringify(value)}`);
}
