import { UtcpError } from '../../core/errors.js';
import type { WebSocketCallTemplate } from './template.js';

/** A websocket template with its defaults applied (docs/design/transports.md#websocket). */
export interface WsSettings {
  url: string;
  protocol: string | undefined;
  /** @default true */
  keepAlive: boolean;
  /** @default null */
  responseFormat: 'json' | 'text' | 'raw' | null;
  /** `timeout` (seconds, default 30) in ms. */
  timeoutMs: number;
  headers: Record<string, string>;
  headerFields: string[];
  message: unknown;
  /** @default "first_message" */
  responseMode: 'first_message' | 'until_close';
  /** @default "single_socket" */
  toolRouting: 'single_socket' | 'path_per_tool';
}

const FORMATS = new Set(['json', 'text', 'raw']);

function invalid(message: string): UtcpError {
  return new UtcpError('INVALID_CONFIG', `websocket template: ${message}`);
}

/** Applies defaults and checks the enumerated fields. @throws UtcpError (INVALID_CONFIG) */
export function wsSettings(template: WebSocketCallTemplate): WsSettings {
  if (typeof template.url !== 'string') throw invalid('url is required');
  const responseFormat = template.response_format ?? null;
  if (responseFormat !== null && !FORMATS.has(responseFormat))
    throw invalid(`unknown response_format "${String(responseFormat)}"`);
  const responseMode = template.response_mode ?? 'first_message';
  if (responseMode !== 'first_message' && responseMode !== 'until_close')
    throw invalid(`unknown response_mode "${String(responseMode)}"`);
  const toolRouting = template.tool_routing ?? 'single_socket';
  if (toolRouting !== 'single_socket' && toolRouting !== 'path_per_tool')
    throw invalid(`unknown tool_routing "${String(toolRouting)}"`);
  return {
    url: template.url,
    protocol: typeof template.protocol === 'string' && template.protocol !== '' ? template.protocol : undefined,
    keepAlive: template.keep_alive !== false,
    responseFormat,
    timeoutMs: positiveOr(template.timeout, 30) * 1000,
    headers: { ...(template.headers ?? {}) },
    headerFields: [...(template.header_fields ?? [])],
    message: template.message ?? null,
    responseMode,
    toolRouting,
  };
}

/** `path_per_tool`: the template URL minus a trailing `/tools`, plus `/<bare tool name>`. */
export function toolPathUrl(url: string, bareName: string): string {
  const u = new URL(url);
  const base = u.pathname.replace(/\/tools\/?$/, '').replace(/\/+$/, '');
  u.pathname = `${base}/${encodeURIComponent(bareName)}`;
  return u.toString();
}

/** A positive finite number, else the default. */
function positiveOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}
