/** The `text` transport: the manual is inline `content` (a UTCP manual or an OpenAPI document). */
import type { CallOptions, DiscoveryResult, Transport, TransportContext } from '../../core/transport.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { TextCallTemplate } from './template.js';
import { discoverFromDocument } from '../shared/local-document.js';

export class TextTransport implements Transport<TextCallTemplate> {
  readonly type = 'text';
  readonly #ctx: TransportContext;

  constructor(ctx: TransportContext) {
    this.#ctx = ctx;
  }

  async registerManual(template: TextCallTemplate, options: CallOptions): Promise<DiscoveryResult> {
    return discoverFromDocument(this.#ctx, template.content, {
      what: `text manual ${options.manualName}`,
      manualName: options.manualName,
      rawTemplate: options.rawTemplate as TextCallTemplate,
    });
  }

  async callTool(_tool: Tool, _args: JsonObject, template: TextCallTemplate): Promise<unknown> {
    return template.content;
  }

  async close(): Promise<void> {}
}
