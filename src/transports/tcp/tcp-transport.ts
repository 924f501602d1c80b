/**
 * The `tcp` transport (docs/design/transports.md#tcp): one fresh connection per discovery or call, request
 * payloads from templates, six receive framings, and a timeout covering connect + whole read.
 */
import { TransportError } from '../../core/errors.js';
import type { CallOptions, DiscoveryResult, Transport, TransportContext } from '../../core/transport.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { TcpCallTemplate } from './template.js';
import { discoveryDisabled, socketDiscoveryResult } from '../shared/socket-discovery.js';
import {
  buildSocketPayload,
  decodeResponseBytes,
  discoveryMessageText,
  textDecoderFor,
  wireToolName,
} from '../shared/socket-payload.js';
import { AbortScopes } from '../../net/socket-scopes.js';
import { socketTarget, socketTimeoutMs } from '../../net/socket-target.js';
import type { ByteReader } from './byte-reader.js';
import { openTcpExchange, type TcpExchange } from './open-tcp-exchange.js';
import {
  readExact,
  readJsonValue,
  readLengthPrefixed,
  readLines,
  readToEnd,
  readUntilDelimiter,
  readDelimited,
} from './read-frame.js';
import { encodeRequestFrame, resolveTcpFraming, type TcpFraming } from './tcp-framing.js';

interface Prepared {
  exchange: TcpExchange;
  framing: TcpFraming;
  what: string;
}

export class TcpTransport implements Transport<TcpCallTemplate> {
  readonly type = 'tcp';
  readonly #ctx: TransportContext;
  readonly #scopes = new AbortScopes('tcp');

  constructor(ctx: TransportContext) {
    this.#ctx = ctx;
  }

  async registerManual(template: TcpCallTemplate, options: CallOptions): Promise<DiscoveryResult> {
    this.#scopes.assertOpen();
    const message = discoveryMessageText(template.discovery_message);
    if (message === undefined) return discoveryDisabled('tcp');
    const target = socketTarget(template, 'tcp');
    const what = `TCP discovery from ${target.label}`;
    const { exchange, framing } = await this.#open(template, Buffer.from(message, 'utf8'), target, what, options);
    try {
      const bytes =
        framing.strategy === 'ndjson'
          ? await this.#firstLine(exchange.reader, what)
          : await this.#readMessage(
              exchange,
              framing,
              this.#ctx.limits.max_document_bytes,
              this.#ctx.limits.max_document_bytes,
              what,
            );
      const text = textDecoderFor(template.response_byte_format ?? 'utf-8').decode(bytes);
      let document: unknown;
      try {
        document = JSON.parse(text);
      } catch (cause) {
        throw new TransportError(`${what}: the response is not valid JSON`, { code: 'PROTOCOL_ERROR', cause });
      }
      return socketDiscoveryResult(document, { rawTemplate: options.rawTemplate, sourceHost: target.host, what });
    } finally {
      exchange.close();
    }
  }

  async callTool(tool: Tool, args: JsonObject, template: TcpCallTemplate, options: CallOptions): Promise<unknown> {
    const { exchange, framing, what } = await this.#openCall(tool, args, template, options);
    try {
      if (framing.strategy === 'ndjson') {
        const items: unknown[] = [];
        let total = 0;
        for await (const line of readLines(exchange.reader, this.#ctx.limits.max_stream_item_bytes, what)) {
          total += line.length;
          if (total > this.#ctx.limits.max_response_bytes) {
            throw new TransportError(
              `${what}: response exceeds the ${this.#ctx.limits.max_response_bytes}-byte limit`,
              { code: 'RESPONSE_TOO_LARGE' },
            );
          }
          items.push(decodeResponseBytes(line, template.response_byte_format));
        }
        return items;
      }
      const cap = Math.min(framing.maxResponseSize, this.#ctx.limits.max_response_bytes);
      const bytes = await this.#readMessage(exchange, framing, this.#ctx.limits.max_response_bytes, cap, what);
      return decodeResponseBytes(bytes, template.response_byte_format);
    } finally {
      exchange.close();
    }
  }

  async *callToolStream(
    tool: Tool,
    args: JsonObject,
    template: TcpCallTemplate,
    options: CallOptions,
  ): AsyncGenerator<unknown> {
    if ((template.framing_strategy ?? 'stream') !== 'ndjson') {
      yield await this.callTool(tool, args, template, options);
      return;
    }
    const { exchange, what } = await this.#openCall(tool, args, template, options);
    try {
      for await (const line of readLines(exchange.reader, this.#ctx.limits.max_stream_item_bytes, what)) {
        yield decodeResponseBytes(line, template.response_byte_format);
      }
    } finally {
      exchange.close();
    }
  }

  async deregisterManual(_template: TcpCallTemplate, options: { manualName: string }): Promise<void> {
    this.#scopes.abortManual(options.manualName);
  }

  async close(): Promise<void> {
    this.#scopes.closeAll();
  }

  async #openCall(tool: Tool, args: JsonObject, template: TcpCallTemplate, options: CallOptions): Promise<Prepared> {
    this.#scopes.assertOpen();
    const target = socketTarget(template, 'tcp');
    const what = `TCP call ${tool.name} to ${target.label}`;
    const payload = buildSocketPayload(
      template,
      args,
      wireToolName(tool, options.manualName, template.tool_name_on_wire),
    );
    return this.#open(template, Buffer.from(payload, 'utf8'), target, what, options);
  }

  async #open(
    template: TcpCallTemplate,
    payload: Buffer,
    target: ReturnType<typeof socketTarget>,
    what: string,
    options: CallOptions,
  ): Promise<Prepared> {
    const framing = resolveTcpFraming(template);
    const request = encodeRequestFrame(payload, framing);
    const exchange = await openTcpExchange({
      target,
      request,
      halfClose: framing.halfClose,
      signal: options.signal,
      scopes: [this.#scopes.manualSignal(options.manualName)],
      remoteSource: options.remoteSource,
      lookup: this.#ctx.lookup,
      timeoutMs: socketTimeoutMs(template),
      callerTimeoutMs: options.timeoutMs,
      what,
    });
    return { exchange, framing, what };
  }

  /** One framed response. `streamCap` bounds `stream` framing; `maxBytes` every other framing. */
  async #readMessage(
    exchange: TcpExchange,
    framing: TcpFraming,
    maxBytes: number,
    streamCap: number,
    what: string,
  ): Promise<Buffer> {
    const { reader } = exchange;
    switch (framing.strategy) {
      case 'length_prefix':
        return readLengthPrefixed(reader, framing.prefixBytes, framing.endian, maxBytes, what);
      case 'delimiter':
        return readUntilDelimiter(reader, framing.delimiter, maxBytes, what);
      case 'fixed_length':
        if (framing.fixedLength > maxBytes) {
          throw new TransportError(`${what}: fixed_message_length exceeds the ${maxBytes}-byte limit`, {
            code: 'RESPONSE_TOO_LARGE',
          });
        }
        return readExact(reader, framing.fixedLength, what);
      case 'json':
        return readJsonValue(reader, maxBytes, what);
      case 'ndjson':
        return this.#firstLine(reader, what);
      case 'stream':
        return readToEnd(reader, streamCap, () => exchange.deadline.timedOut);
    }
  }

  async #firstLine(reader: ByteReader, what: string): Promise<Buffer> {
    const chunk = await readDelimited(reader, Buffer.from('\n'), this.#ctx.limits.max_document_bytes, what);
    if (chunk === null)
      throw new TransportError(`${what}: connection closed before any response byte`, { code: 'PROTOCOL_ERROR' });
    return chunk.message;
  }
}
