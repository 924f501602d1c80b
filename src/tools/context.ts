/** What every code tool shares: the workspace, the limits, and argument helpers. */
import type { JsonObject } from '../index.js';
import type { Workspace } from './workspace.js';

/** Caps on what one tool call reads, returns or writes. */
export interface CodeToolsLimits {
  /** Largest file edited, patched or loaded whole by `read`, in bytes (`read` scans larger ones). @default 4 MiB */
  maxFileBytes: number;
  /** Lines `read` returns when no `limit` is given. @default 2000 */
  readLines: number;
  /** Bytes `read` returns in one call; the next offset is announced. @default 50_000 */
  readBytes: number;
  /** Longest line `read` shows before cutting it. @default 2000 */
  lineChars: number;
  /** Results of `grep`, entries of `glob` and `ls`. @default 200 matches, 500 entries */
  grepMatches: number;
  listEntries: number;
  /** Bytes of output `bash` returns inline (head and tail kept). @default 30_000 */
  inlineOutputBytes: number;
  /** Bytes of output kept per process for `bash_output` (a ring buffer). @default 1 MiB */
  processBufferBytes: number;
  /** Bytes `web_fetch` downloads, and characters of text it returns per call. @default 2 MiB, 50_000 */
  fetchBytes: number;
  fetchTextChars: number;
}

export const DEFAULT_LIMITS: CodeToolsLimits = {
  maxFileBytes: 4 * 1024 * 1024,
  readLines: 2000,
  readBytes: 50_000,
  lineChars: 2000,
  grepMatches: 200,
  listEntries: 500,
  inlineOutputBytes: 30_000,
  processBufferBytes: 1024 * 1024,
  fetchBytes: 2 * 1024 * 1024,
  fetchTextChars: 50_000,
};

export interface CodeToolsContext {
  workspace: Workspace;
  limits: CodeToolsLimits;
}

export function stringArg(args: JsonObject, name: string): string {
  const value = args[name];
  if (typeof value !== 'string') throw new Error(`${name} must be a string`);
  return value;
}

export function optionalString(args: JsonObject, name: string): string | undefined {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new Error(`${name} must be a string`);
  return value;
}

export function intArg(args: JsonObject, name: string, fallback: number, min = 1): number {
  const value = args[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min)
    throw new Error(`${name} must be an integer ≥ ${min}`);
  return value;
}

export function boolArg(args: JsonObject, name: string): boolean {
  const value = args[name];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new Error(`${name} must be true or false`);
  return value;
}
