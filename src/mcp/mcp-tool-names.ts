import { createHash } from 'node:crypto';

/** Names MCP hosts accept everywhere: 1 to 128 of `A-Z a-z 0-9 _ - .` (SEP-986). */
const MCP_TOOL_NAME = /^[A-Za-z0-9._-]{1,128}$/;
const MAX_LENGTH = 128;
const HASH_LENGTH = 8;

/**
 * The MCP name of a UTCP tool: the full `<manual>.<tool>` name when MCP accepts it as is,
 * else the name with every other character replaced by `_`, cut to fit, and suffixed with
 * `_` plus 8 hex digits of the original's SHA-256, so that encoded names stay distinct
 * from each other and from names that needed no encoding.
 */
export function encodeMcpToolName(utcpName: string): string {
  if (MCP_TOOL_NAME.test(utcpName)) return utcpName;
  const hash = createHash('sha256').update(utcpName).digest('hex').slice(0, HASH_LENGTH);
  const safe = utcpName.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, MAX_LENGTH - HASH_LENGTH - 1);
  return `${safe}_${hash}`;
}

/** True when `name` is a valid MCP tool name. */
export function isValidMcpToolName(name: string): boolean {
  return MCP_TOOL_NAME.test(name);
}
