/**
 * `web_fetch`: one GET through the library's own HTTP path, so the URL policy (plain http only to loopback,
 * https elsewhere, no credentials in URLs, every redirect hop re-checked) and the response size cap apply as
 * for any http tool. HTML is turned into readable text with `html-to-text`. See docs/design/code-tools.md.
 */
import { UtcpClient, type DirectFunction } from '../index.js';
import { intArg, stringArg, type CodeToolsContext } from './context.js';

export interface FetchedPage {
  body: unknown;
}

/**
 * GETs `url` with a private client that holds one throw-away manual per request: the public way to reach the
 * library's checked HTTP exchange (an `http` tool call) without putting the URL into the user's repository.
 */
export class HttpGetter {
  #client: Promise<UtcpClient> | undefined;
  #seq = 0;
  readonly #maxBytes: number;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  #get(): Promise<UtcpClient> {
    this.#client ??= UtcpClient.create({ limits: { max_response_bytes: this.#maxBytes } });
    return this.#client;
  }

  async get(url: string, signal: AbortSignal, timeoutMs: number): Promise<FetchedPage> {
    const client = await this.#get();
    const name = `fetch_${++this.#seq}`;
    const manual = {
      utcp_version: '1.0.1',
      manual_version: '1.0.0',
      tools: [
        {
          name: 'get',
          description: 'GET',
          inputs: { type: 'object', properties: {} },
          tool_call_template: { call_template_type: 'http', url, http_method: 'GET', timeout: timeoutMs },
        },
      ],
    };
    const registered = await client.registerManual({
      name,
      call_template_type: 'text',
      content: JSON.stringify(manual),
      allowed_communication_protocols: ['http'],
    });
    try {
      if (!registered.success) throw new Error(registered.errors.join('; '));
      if (registered.manual.tools.length !== 1)
        throw new Error(`the URL was refused: ${registered.warnings.join('; ') || 'no tool could be built for it'}`);
      const body = await client.callTool(`${name}.get`, {}, { signal, timeoutMs });
      return { body };
    } finally {
      await client.deregisterManual(name).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    const c = this.#client;
    this.#client = undefined;
    if (c) await (await c).close();
  }
}

function looksLikeHtml(text: string): boolean {
  return /^\s*(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b/i.test(text);
}

/** Readable text of an HTML page: headings, paragraphs, lists, tables and links kept; scripts, styles and images dropped. */
export async function htmlToText(html: string): Promise<string> {
  const { convert } = await import('html-to-text');
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { hideLinkHrefIfSameAsText: true, ignoreHref: false } },
      { selector: 'img', format: 'skip' },
      { selector: 'script', format: 'skip' },
      { selector: 'style', format: 'skip' },
      { selector: 'noscript', format: 'skip' },
      { selector: 'nav', format: 'skip' },
    ],
  })
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export function webFetchTool(ctx: CodeToolsContext, getter: HttpGetter, defaultTimeoutMs: number): DirectFunction {
  const maxText = ctx.limits.fetchTextChars;
  return {
    name: 'web_fetch',
    description:
      `Fetch a URL with GET and return its content as text (HTML is converted to readable text; JSON is pretty-printed). https:// URLs, or http:// to localhost only. ` +
      `At most ${ctx.limits.fetchBytes} bytes are downloaded and ${maxText} characters returned (use offset to read on).`,
    tags: ['network', 'read'],
    inputs: {
      type: 'object',
      properties: {
        url: { type: 'string', description: 'The URL' },
        offset: {
          type: 'integer',
          minimum: 0,
          description: 'Character offset into the text, to read a long page in parts. Default 0',
        },
        timeout_ms: { type: 'integer', minimum: 1, maximum: 120_000, description: `Default ${defaultTimeoutMs}` },
      },
      required: ['url'],
      additionalProperties: false,
    },
    async handler(args, { signal }) {
      const url = stringArg(args, 'url');
      const offset = intArg(args, 'offset', 0, 0);
      const timeoutMs = intArg(args, 'timeout_ms', defaultTimeoutMs);
      const { body } = await getter.get(url, signal, timeoutMs);
      let text: string;
      if (typeof body === 'string') text = looksLikeHtml(body) ? await htmlToText(body) : body;
      else text = JSON.stringify(body, null, 2) ?? '';
      if (text === '') return `(${url} returned an empty body)`;
      if (offset >= text.length)
        return `(${url}: offset ${offset} is past the end of the ${text.length}-character text)`;
      const part = text.slice(offset, offset + maxText);
      const end = offset + part.length;
      return end < text.length
        ? `${part}\n(showing characters ${offset}-${end} of ${text.length}; read on with offset=${end})`
        : part;
    },
  };
}
