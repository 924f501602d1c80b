import { UtcpError } from '../core/errors.js';

/** Host and port of a tcp/udp template, checked; IPv6 brackets removed (`[::1]` → `::1`). */
export interface SocketTarget {
  host: string;
  port: number;
  /** `host:port` for messages (`[::1]:80` for IPv6). */
  label: string;
}

/** @throws UtcpError (INVALID_CONFIG) for an empty host or a port outside 1–65535. */
export function socketTarget(template: { host?: unknown; port?: unknown }, type: string): SocketTarget {
  const rawHost = typeof template.host === 'string' ? template.host.trim() : '';
  const host = rawHost.startsWith('[') && rawHost.endsWith(']') ? rawHost.slice(1, -1) : rawHost;
  if (!host) throw new UtcpError('INVALID_CONFIG', `${type} template: host is required`);
  const port = template.port;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new UtcpError('INVALID_CONFIG', `${type} template: port must be an integer between 1 and 65535`);
  }
  return { host, port, label: host.includes(':') ? `[${host}]:${port}` : `${host}:${port}` };
}

/** The template timeout in ms (`timeout`, or its alias `timeout_ms`), else the default. */
export function socketTimeoutMs(template: { timeout?: unknown; timeout_ms?: unknown }, fallbackMs = 30_000): number {
  for (const v of [template.timeout, template.timeout_ms]) {
    if (typeof v === 'number' && Number.isFinite(v) && v > 0) return v;
  }
  return fallbackMs;
}
