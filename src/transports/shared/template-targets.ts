import { isPlainObject as isObj } from '../../core/guards.js';

/** Every host or URL a tool template would contact (url, subscription_url, host, token URL, MCP server URLs). */
export function templateTargets(template: unknown): string[] {
  if (!isObj(template)) return [];
  const out: string[] = [];
  for (const key of ['url', 'subscription_url', 'host']) {
    if (typeof template[key] === 'string') out.push(template[key] as string);
  }
  if (isObj(template.auth) && typeof template.auth.token_url === 'string') out.push(template.auth.token_url);
  const servers = isObj(template.config) && isObj(template.config.mcpServers) ? template.config.mcpServers : undefined;
  for (const server of Object.values(servers ?? {})) {
    if (isObj(server) && typeof server.url === 'string') out.push(server.url);
  }
  return out;
}
