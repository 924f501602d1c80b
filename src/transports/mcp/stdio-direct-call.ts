/**
 * `tools/call` on a stdio connection of the 2025 era without the SDK's request layer
 * (docs/design/transports.md#mcp-direct-calls): the request line is written through our stdio transport with an id of
 * our own namespace, its answer is routed to the call before the SDK sees it, and the result's shape is checked
 * here. The SDK keeps the handshake, listings, notifications, resources and every HTTP connection.
 *
 * Failures are the SDK's own error values (timeout, closed connection, JSON-RPC error, invalid result), so the
 * session maps them to the same typed errors as the SDK path.
 */
import { type AbortSource, type IdleTimer, idleTimer, onAbort } from '../../core/deadline.js';
import { isPlainObject } from '../../core/guards.js';
import type { ProgressEvent } from '../../core/transport.js';
import type { McpSdk } from './load-mcp-sdk.js';
import type { McpToolResult } from './map-tool-result.js';
import type { DirectWaiter, StdioProcessTransport } from './stdio-process-transport.js';

/** The session's per-call settings (`SessionCallOptions` of mcp-session.ts). */
export interface DirectCallOptions {
  /** What aborts the call. */
  scope: AbortSource;
  /** The caller's deadline (already part of `scope`): decides whether a progress token is sent. */
  timeoutMs?: number;
  onProgress?: (event: ProgressEvent) => void;
}

type Sdk = Pick<McpSdk, 'SdkError' | 'SdkErrorCode' | 'ProtocolError' | 'callToolResultSchema'>;

/** Makes the direct `tools/call` requests of one stdio connection. */
export class DirectCaller {
  readonly stdio: StdioProcessTransport;
  readonly sdk: Sdk;
  /** The server's per-request timeout, in ms (restarted by progress when a token is sent). */
  readonly timeoutMs: number;

  constructor(stdio: StdioProcessTransport, sdk: Sdk, timeoutMs: number) {
    this.stdio = stdio;
    this.sdk = sdk;
    this.timeoutMs = timeoutMs;
  }

  /**
   * Sends `tools/call` and resolves with the checked result. A progress token is sent, and progress restarts the
   * timeout, on the same terms as the SDK path (docs/design/transports.md#mcp-progress).
   */
  callTool(name: string, args: Record<string, unknown>, options: DirectCallOptions): Promise<McpToolResult> {
    const scope = options.scope;
    if (scope.aborted) return Promise.reject(scope.reason);
    const onProgress = options.onProgress;
    const deadline = options.timeoutMs;
    const withProgress = onProgress !== undefined || deadline === undefined || deadline > this.timeoutMs;
    const call = new DirectCall(this, onProgress);
    const id = this.stdio.directId();
    const params = withProgress ? { name, arguments: args, _meta: { progressToken: id } } : { name, arguments: args };
    let sent: boolean;
    try {
      sent = this.stdio.sendDirect(id, 'tools/call', params, call);
    } catch (error) {
      // Arguments JSON cannot express (a BigInt, a cycle): nothing was written or registered.
      return Promise.reject(error);
    }
    if (!sent) {
      const why = this.stdio.endReason;
      return Promise.reject(new Error(`Not connected${why ? `: ${why}` : ''}`));
    }
    call.start(id, scope);
    return call.promise;
  }
}

/** One direct `tools/call` in flight. */
class DirectCall implements DirectWaiter {
  readonly promise: Promise<McpToolResult>;
  readonly #caller: DirectCaller;
  readonly #onProgress: ((event: ProgressEvent) => void) | undefined;
  #resolve!: (value: McpToolResult) => void;
  #reject!: (error: unknown) => void;
  #id = '';
  #timer: IdleTimer | undefined;
  #unlink: (() => void) | undefined;
  #done = false;

  constructor(caller: DirectCaller, onProgress: ((event: ProgressEvent) => void) | undefined) {
    this.#caller = caller;
    this.#onProgress = onProgress;
    this.promise = new Promise<McpToolResult>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** The request was written with this id: arm the timeout and follow the caller's scope. */
  start(id: string, scope: AbortSource): void {
    this.#id = id;
    if (this.#done) return; // the write already failed
    const timer = (this.#timer = idleTimer(this.#caller.timeoutMs, () => this.#timedOut()));
    timer.restart();
    const unlink = onAbort(scope, (reason) => this.#cancel(reason, reason));
    // An already aborted scope ran the hook above at once.
    if (this.#done) unlink();
    else this.#unlink = unlink;
  }

  answer(message: Record<string, unknown>): void {
    if (this.#done) return;
    this.#finish();
    const { sdk } = this.#caller;
    const result = message.result;
    const error = message.error;
    if (message.jsonrpc === '2.0' && error === undefined && isPlainObject(result)) {
      this.#settleResult(result);
    } else if (message.jsonrpc === '2.0' && result === undefined && isRpcError(error)) {
      this.#reject(sdk.ProtocolError.fromError(error.code, error.message, error.data));
    } else {
      this.#reject(
        new sdk.SdkError(
          sdk.SdkErrorCode.InvalidResult,
          'Invalid response for tools/call: not a JSON-RPC result object or error',
        ),
      );
    }
  }

  progress(params: Record<string, unknown>): void {
    if (this.#done) return;
    const progress = params.progress;
    const total = params.total;
    const message = params.message;
    if (
      typeof progress !== 'number' ||
      (total !== undefined && typeof total !== 'number') ||
      (message !== undefined && typeof message !== 'string')
    )
      return;
    // A token is only sent when progress restarts the timeout (docs/design/transports.md#mcp-progress).
    this.#timer?.restart();
    this.#onProgress?.({ progress, total, message });
  }

  fail(error: Error | undefined): void {
    if (this.#done) return;
    this.#finish();
    const { sdk } = this.#caller;
    this.#reject(error ?? new sdk.SdkError(sdk.SdkErrorCode.ConnectionClosed, 'Connection closed'));
  }

  #timedOut(): void {
    const { sdk, timeoutMs } = this.#caller;
    this.#cancel(
      'Request timed out',
      new sdk.SdkError(sdk.SdkErrorCode.RequestTimeout, 'Request timed out', { timeout: timeoutMs }),
    );
  }

  /** Gives up on the answer: tells the server (`notifications/cancelled`) and rejects. */
  #cancel(reason: unknown, error: unknown): void {
    if (this.#done) return;
    this.#finish();
    this.#caller.stdio.cancelDirect(this.#id, String(reason));
    this.#reject(error);
  }

  #finish(): void {
    this.#done = true;
    this.#timer?.pause();
    this.#timer = undefined;
    this.#unlink?.();
    this.#unlink = undefined;
  }

  #settleResult(result: Record<string, unknown>): void {
    if (isPlainCallToolResult(result)) {
      this.#resolve(result as McpToolResult);
      return;
    }
    const { sdk } = this.#caller;
    let value = result;
    // A 2025-era result never carries `resultType`; the SDK strips one before validating.
    if (Object.hasOwn(value, 'resultType')) {
      value = { ...value };
      delete value.resultType;
    }
    const checked = sdk.callToolResultSchema['~standard'].validate(value);
    if (checked.issues) {
      const issues = checked.issues.map((issue) => {
        const path = issue.path?.map((p) => String(typeof p === 'object' ? p.key : p)).join('.');
        return path ? `${path}: ${issue.message}` : issue.message;
      });
      this.#reject(
        new sdk.SdkError(sdk.SdkErrorCode.InvalidResult, `Invalid result for tools/call: ${issues.join(', ')}`),
      );
      return;
    }
    this.#resolve(checked.value as McpToolResult);
  }
}

function isRpcError(value: unknown): value is { code: number; message: string; data?: unknown } {
  return (
    isPlainObject(value) &&
    Number.isSafeInteger(value.code) &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}

/**
 * True for a result the SDK's `CallToolResult` schema would return unchanged: `content` an array of bare text items
 * (`{type: 'text', text}` and nothing else), `isError` absent or a boolean, no `_meta` and no `resultType` (other keys
 * pass through that schema as they are). Any other result goes through the schema itself.
 */
export function isPlainCallToolResult(result: Record<string, unknown>): boolean {
  const content = result.content;
  if (!Array.isArray(content)) return false;
  for (const item of content) {
    if (
      typeof item !== 'object' ||
      item === null ||
      item.type !== 'text' ||
      typeof item.text !== 'string' ||
      Object.keys(item).length !== 2
    )
      return false;
  }
  const isError = result.isError;
  return (
    (isError === undefined || typeof isError === 'boolean') &&
    !Object.hasOwn(result, '_meta') &&
    !Object.hasOwn(result, 'resultType')
  );
}
