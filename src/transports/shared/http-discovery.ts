import { HttpStatusError, UtcpError } from '../../core/errors.js';
import { isOpenApiDocument, isUtcpManualDocument, parseDocumentText } from '../../core/document.js';
import { normalizeManual } from '../../core/legacy.js';
import type { CallOptions, DiscoveryResult, TransportContext } from '../../core/transport.js';
import type { OpenApiSourceTemplate } from './template-fields.js';
import { assertUrlAllowed, isLoopbackLike, redactUrl, violatesRemoteLoopback } from '../../core/url-policy.js';
import { invalidateAuth, resolveAuth } from '../../http/auth.js';
import { utf8 } from '../../http/http-body.js';
import { exchangeDefaults } from '../../http/http-dispatcher.js';
import { httpExchange, type BufferedHttpResponse } from '../../http/http-exchange.js';
import { appendQuery, mergeHeaders, type HttpRequestTemplate } from '../../http/http-request.js';
import { templateTargets } from './template-targets.js';
import { isPlainObject as isObj } from '../../core/guards.js';

export { templateTargets };

/** Discovery deadline for http, sse and streamable_http, in ms (docs/design/transports.md#timeouts). */
export const DISCOVERY_TIMEOUT_MS = 10_000;

export interface DiscoverHttpOptions {
  /** Names the protocol in messages: "HTTP", "SSE", "Streamable HTTP". */
  label: string;
  method: string;
  /** Only `http` turns OpenAPI documents into manuals; sse/streamable_http need a UTCP manual. */
  allowOpenApi: boolean;
}

type Obj = Record<string, unknown>;

/**
 * The remote→loopback rule for discovered UTCP manuals (docs/design/security.md#remote-loopback): a manual fetched from a
 * remote origin loses every tool that would contact a loopback-like host, each with a warning.
 */
export function dropLoopbackTools(manual: Obj, sourceUrl: string, warnings: string[]): Obj {
  if (!Array.isArray(manual.tools)) return manual;
  // The rule only concerns remote sources; checking once here spares parsing every tool URL
  // (10,000 URL parses per registration) for local and loopback manuals.
  if (!violatesRemoteLoopback(sourceUrl, 'http://127.0.0.1/')) return manual;
  const tools = manual.tools.filter((tool, i) => {
    const target = templateTargets(isObj(tool) ? tool.tool_call_template : undefined).find((t) =>
      violatesRemoteLoopback(sourceUrl, t),
    );
    if (target === undefined) return true;
    const name = isObj(tool) && typeof tool.name === 'string' ? tool.name : `#${i}`;
    warnings.push(
      `Dropped tool ${name}: a manual from remote ${redactUrl(sourceUrl)} may not target the loopback address ${redactUrl(target)}`,
    );
    return false;
  });
  return { ...manual, tools };
}

async function fetchManualDocument(
  template: HttpRequestTemplate,
  ctx: TransportContext,
  signal: AbortSignal,
  what: string,
  method: string,
  timeoutMs: number | undefined,
): Promise<BufferedHttpResponse> {
  const url = assertUrlAllowed(template.url, 'manual discovery');
  url.hash = '';
  const defaults = exchangeDefaults(ctx);
  for (let attempt = 0; ; attempt++) {
    const auth = await resolveAuth(template.auth, ctx, signal);
    const headers = mergeHeaders(template.headers, [], auth).toObject();
    const response = await httpExchange(
      { url: appendQuery(url, auth.query), method, headers },
      {
        dispatcher: defaults.dispatcher,
        maxRedirects: defaults.maxRedirects,
        logger: defaults.logger,
        signal,
        timeoutMs: DISCOVERY_TIMEOUT_MS,
        callerTimeoutMs: timeoutMs,
        what,
        context: 'manual discovery',
        redirect: 'follow',
        maxBytes: ctx.limits.max_document_bytes,
        errorBodyBytes: 2048,
      },
    );
    if (response.status === 401 && attempt === 0 && template.auth?.auth_type === 'oauth2') {
      invalidateAuth(template.auth, ctx);
      continue;
    }
    if (response.status >= 400) {
      throw new HttpStatusError(response.status, redactUrl(response.url), utf8(response.bytes), response.statusText);
    }
    return response;
  }
}

/**
 * Discovery for http, sse and streamable_http (docs/design/transports.md#http-discovery): one request with headers + auth,
 * redirects followed by the rules, 10 s deadline, then a UTCP manual (remote→loopback tools dropped)
 * or, for http, an OpenAPI document handed to the converter with the final URL as spec URL.
 */
export async function discoverHttpManual(
  template: HttpRequestTemplate,
  ctx: TransportContext,
  options: CallOptions,
  discover: DiscoverHttpOptions,
): Promise<DiscoveryResult> {
  const what = `${discover.label} discovery of manual ${options.manualName}`;
  const response = await fetchManualDocument(template, ctx, options.signal, what, discover.method, options.timeoutMs);
  const sourceUrl = redactUrl(response.url);
  const remoteSource = !isLoopbackLike(response.url);
  const doc = await parseDocumentText(utf8(response.bytes), {
    what: `manual document from ${sourceUrl}`,
    limits: ctx.limits,
  });
  if (isUtcpManualDocument(doc)) {
    const warnings: string[] = [];
    const normalized = normalizeManual(doc, options.rawTemplate as unknown as Obj, warnings) as Obj;
    return { manual: dropLoopbackTools(normalized, response.url.href, warnings), warnings, remoteSource };
  }
  if (discover.allowOpenApi && isOpenApiDocument(doc)) {
    const raw = options.rawTemplate as OpenApiSourceTemplate;
    const { manual, warnings } = await ctx.convertOpenApi(doc, {
      manualName: options.manualName,
      specUrl: sourceUrl,
      authTools: raw.auth_tools ?? null,
      manualAuth: raw.auth ?? null,
      manualHeaders: (raw as { headers?: unknown }).headers ?? null,
      authMode: raw.openapi_auth ?? null,
      filter: raw.openapi_filter ?? null,
      limits: ctx.limits,
    });
    return { manual, warnings, openapi: true, remoteSource };
  }
  const expected = discover.allowOpenApi
    ? 'a UTCP manual (an object with a "tools" array) or an OpenAPI document'
    : 'a UTCP manual (an object with a "tools" array)';
  throw new UtcpError('INVALID_MANUAL', `${what}: the document from ${sourceUrl} is not ${expected}`);
}
