/**
 * The `udp` transport (docs/design/transports.md#udp): one datagram out, up to `number_of_response_datagrams`
 * replies back from the target address only, then decode; a fresh socket per discovery or call.
 */
import { TransportError } from '../../core/errors.js';
import type { CallOptions, DiscoveryResult, Transport, TransportContext } from '../../core/transport.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { UdpCallTemplate } from './template.js';
import { discoveryDisabled, socketDiscoveryResult } from '../shared/socket-discovery.js';
import {
  buildSocketPayload,
  decodeResponseBytes,
  discoveryMessageText,
  textDecoderFor,
  wireToolName,
} from '../shared/socket-payload.js';
import { AbortScopes } from '../../net/socket-scopes.js';
import { socketTarget, socketTimeoutMs, type SocketTarget } from '../../net/socket-target.js';
import { exchangeDatagrams } from './exchange-datagrams.js';

function responseCount(template: UdpCallTemplate): number {
  const n = template.number_of_response_datagrams ?? 1;
  if (!Number.isInteger(n) || n < 0) {
    throw new TransportError('udp template: number_of_response_datagrams must be a non-negative integer', {
      code: 'INVALID_CONFIG',
    });
  }
  return n;
}

export class UdpTransport implements Transport<UdpCallTemplate> {
  readonly type = 'udp';
  readonly #ctx: TransportContext;
  readonly #scopes = new AbortScopes('udp');

  constructor(ctx: TransportContext) {
    this.#ctx = ctx;
  }

  async registerManual(template: UdpCallTemplate, options: CallOptions): Promise<DiscoveryResult> {
    this.#scopes.assertOpen();
    const message = discoveryMessageText(template.discovery_message);
    if (message === undefined) return discoveryDisabled('udp');
    const target = socketTarget(template, 'udp');
    const what = `UDP discovery from ${target.label}`;
    const replies = await this.#exchange(
      template,
      target,
      Buffer.from(message, 'utf8'),
      Math.max(1, responseCount(template)),
      this.#ctx.limits.max_document_bytes,
      what,
      options,
    );
    const text = textDecoderFor(template.response_byte_format ?? 'utf-8').decode(Buffer.concat(replies));
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch (cause) {
      throw new TransportError(`${what}: the response is not valid JSON`, { code: 'PROTOCOL_ERROR', cause });
    }
    return socketDiscoveryResult(document, { rawTemplate: options.rawTemplate, sourceHost: target.host, what });
  }

  async callTool(tool: Tool, args: JsonObject, template: UdpCallTemplate, options: CallOptions): Promise<unknown> {
    this.#scopes.assertOpen();
    const target = socketTarget(template, 'udp');
    const what = `UDP call ${tool.name} to ${target.label}`;
    const count = responseCount(template);
    const payload = buildSocketPayload(
      template,
      args,
      wireToolName(tool, options.manualName, template.tool_name_on_wire),
    );
    const replies = await this.#exchange(
      template,
      target,
      Buffer.from(payload, 'utf8'),
      count,
      this.#ctx.limits.max_response_bytes,
      what,
      options,
    );
    if (count === 0) return template.response_byte_format === null ? new Uint8Array(0) : '';
    return decodeResponseBytes(Buffer.concat(replies), template.response_byte_format);
  }

  async *callToolStream(
    tool: Tool,
    args: JsonObject,
    template: UdpCallTemplate,
    options: CallOptions,
  ): AsyncGenerator<unknown> {
    yield await this.callTool(tool, args, template, options);
  }

  async deregisterManual(_template: UdpCallTemplate, options: { manualName: string }): Promise<void> {
    this.#scopes.abortManual(options.manualName);
  }

  async close(): Promise<void> {
    this.#scopes.closeAll();
  }

  #exchange(
    template: UdpCallTemplate,
    target: SocketTarget,
    payload: Buffer,
    count: number,
    maxBytes: number,
    what: string,
    options: CallOptions,
  ): Promise<Buffer[]> {
    return exchangeDatagrams({
      target,
      payload,
      responseCount: count,
      signal: options.signal,
      scopes: [this.#scopes.manualSignal(options.manualName)],
      remoteSource: options.remoteSource,
      lookup: this.#ctx.lookup,
      timeoutMs: socketTimeoutMs(template),
      callerTimeoutMs: options.timeoutMs,
      maxBytes,
      what,
      logger: this.#ctx.logger,
    });
  }
}
