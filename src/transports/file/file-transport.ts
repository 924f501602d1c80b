/** The `file` transport: a manual or OpenAPI document read from a file confined to the client's root dir. */
import { extname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UtcpError } from '../../core/errors.js';
import type { CallOptions, DiscoveryResult, Transport, TransportContext } from '../../core/transport.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { FileCallTemplate } from './template.js';
import { openConfinedFile } from '../shared/confined-path.js';
import { discoverFromDocument } from '../shared/local-document.js';

async function readConfined(ctx: TransportContext, filePath: string): Promise<{ path: string; text: string }> {
  const tooLarge = () =>
    new UtcpError(
      'RESPONSE_TOO_LARGE',
      `File ${filePath} is larger than the ${ctx.limits.max_document_bytes}-byte document limit`,
    );
  try {
    // The size is checked on the opened file before reading (docs/design/security.md#limits), then again on what was read.
    // Opened, then checked: the descriptor's real path must lie inside the root (docs/design/threat-model.md#file-race).
    const { handle, path } = await openConfinedFile(ctx.rootDir, filePath, 'file_path');
    try {
      if ((await handle.stat()).size > ctx.limits.max_document_bytes) throw tooLarge();
      const buf = await handle.readFile();
      if (buf.length > ctx.limits.max_document_bytes) throw tooLarge();
      return { path, text: buf.toString('utf8') };
    } finally {
      await handle.close();
    }
  } catch (cause) {
    if (cause instanceof UtcpError) throw cause;
    throw new UtcpError(
      'TRANSPORT_FAILED',
      `Cannot read file ${filePath}: ${(cause as NodeJS.ErrnoException).code ?? cause}`,
      { cause },
    );
  }
}

export class FileTransport implements Transport<FileCallTemplate> {
  readonly type = 'file';
  readonly #ctx: TransportContext;

  constructor(ctx: TransportContext) {
    this.#ctx = ctx;
  }

  async registerManual(template: FileCallTemplate, options: CallOptions): Promise<DiscoveryResult> {
    const { path, text } = await readConfined(this.#ctx, template.file_path);
    const ext = extname(path).toLowerCase();
    return discoverFromDocument(this.#ctx, text, {
      what: `manual file ${template.file_path}`,
      manualName: options.manualName,
      rawTemplate: options.rawTemplate as FileCallTemplate,
      format: ext === '.yaml' || ext === '.yml' ? 'yaml' : ext === '.json' ? 'json' : 'auto',
      specUrl: pathToFileURL(path).href,
    });
  }

  async callTool(_tool: Tool, _args: JsonObject, template: FileCallTemplate): Promise<unknown> {
    return (await readConfined(this.#ctx, template.file_path)).text;
  }

  async close(): Promise<void> {}
}
