/**
 * `web_search` (docs/design/code-tools.md#web-search): a query against a SearXNG-compatible endpoint
 * (`<url>/search?q=…&format=json`), through the same checked HTTP path as `web_fetch` (URL policy, redirects,
 * response cap). Registered only when `webSearch: { url }` is configured.
 */
import type { DirectFunction } from '../index.js';
import { intArg, stringArg } from './context.js';
import type { HttpGetter } from './fetch.js';

export const WEB_SEARCH_DEFAULT_RESULTS = 10;
export const WEB_SEARCH_MAX_RESULTS = 25;

export interface WebSearchOptions {
  /** The endpoint's base URL, e.g. https://search.example.org (`/search` is appended). */
  url: string;
  /** Results when the model asks for no number. @default 10 (at most 25) */
  defaultResults?: number;
}

interface Hit {
  title: string;
  url: string;
  content: string;
}

function hitsOf(body: unknown): Hit[] {
  const doc = typeof body === 'string' ? (JSON.parse(body) as unknown) : body;
  const results = (doc as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) throw new Error('the search endpoint did not answer with a SearXNG JSON document');
  const out: Hit[] = [];
  for (const r of results) {
    const x = r as Record<string, unknown> | null;
    if (!x || typeof x.url !== 'string') continue;
    out.push({
      title: typeof x.title === 'string' ? x.title : x.url,
      url: x.url,
      content: typeof x.content === 'string' ? x.content.replace(/\s+/g, ' ').trim() : '',
    });
  }
  return out;
}

/** The search URL for `query`: `<base>/search?q=<query>&format=json`. */
export function searchUrl(base: string, query: string): string {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/search`;
  url.searchParams.set('q', query);
  url.searchParams.set('format', 'json');
  return url.href;
}

export function webSearchTool(getter: HttpGetter, options: WebSearchOptions, timeoutMs: number): DirectFunction {
  const defaultResults = options.defaultResults ?? WEB_SEARCH_DEFAULT_RESULTS;
  return {
    name: 'web_search',
    description: `Search the web. Returns up to max_results results (default ${defaultResults}, at most ${WEB_SEARCH_MAX_RESULTS}) as numbered lines: title, URL and a snippet. Read a result with web_fetch.`,
    tags: ['network', 'read'],
    inputs: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 500, description: 'The search terms' },
        max_results: { type: 'integer', minimum: 1, maximum: WEB_SEARCH_MAX_RESULTS },
      },
      required: ['query'],
      additionalProperties: false,
    },
    async handler(args, { signal }) {
      const query = stringArg(args, 'query').trim();
      if (query === '') throw new Error('query must not be empty');
      const max = Math.min(intArg(args, 'max_results', defaultResults), WEB_SEARCH_MAX_RESULTS);
      const { body } = await getter.get(searchUrl(options.url, query), signal, timeoutMs);
      const hits = hitsOf(body).slice(0, max);
      if (hits.length === 0) return `No results for ${JSON.stringify(query)}`;
      return hits
        .map((h, i) => `${i + 1}. ${h.title}\n   ${h.url}${h.content ? `\n   ${h.content.slice(0, 300)}` : ''}`)
        .join('\n');
    },
  };
}
