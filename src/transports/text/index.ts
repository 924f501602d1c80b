/** The `text` transport: the manual is inline `content` (a UTCP manual or an OpenAPI document). */
import type { DiscoveryResult, Transport, TransportContext } from '../../core/transport.js';
import type { TextCallTemplate } from './template.js';
import { discoverFromDocument } from '../shared/local-document.js';

export function createTextTransport(ctx: TransportContext): Transport<TextCallTemplate> {
  return {
    type: 'text',
    async registerManual(template, options): Promise<DiscoveryResult> {
      return discoverFromDocument(ctx, template.content, {
        what: `text manual ${options.manualName}`,
        manualName: options.manualName,
        rawTemplate: options.rawTemplate as TextCallTemplate,
      });
    },
    async callTool(_tool, _args, template) {
      return template.content;
    },
    async close() {},
  };
}
