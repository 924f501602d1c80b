/**
 * A paused run's state arrives from storage or a browser, so `resumeAgent` treats every field as hostile input
 * (docs/design/agent.md#resume-checks): this file checks its shape, naming the bad field, and signs and verifies
 * it with an optional HMAC key.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { UtcpError } from '../../index.js';
import type { ApprovalDecision } from './approval.js';
import { checkDecision } from './execute-tool-calls.js';

/** The state handed to `resumeAgent` is malformed, inconsistent, or its signature does not verify. */
export class AgentStateError extends UtcpError {
  static override readonly errorKind: string = 'AgentStateError';
  override name = 'AgentStateError';
  /** Where in the state the problem is, e.g. `state.planned[0].toolName`. */
  readonly path: string;
  constructor(path: string, problem: string) {
    super('INVALID_CONFIG', `resumeAgent: ${path} ${problem}`);
    this.path = path;
  }
}

/** Deepest nesting a state may have; deeper input is refused before any recursive walk could overflow the stack. */
const MAX_DEPTH = 200;
const MIN_KEY_BYTES = 16;
const MAC_CONTEXT = 'utcp-kit/agent-run-state/v1\n';

type Obj = Record<string, unknown>;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}

/** A plain JSON object whose own keys are all in `allowed` (when given). */
export function objectAt(value: unknown, path: string, allowed?: readonly string[]): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new AgentStateError(path, `must be an object, got ${describe(value)}`);
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw new AgentStateError(path, 'must be a plain JSON object');
  if (allowed) {
    for (const key of Object.keys(value))
      if (!allowed.includes(key)) throw new AgentStateError(`${path}.${key}`, 'is not a field of a run state');
  }
  return value as Obj;
}

export function arrayAt(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) throw new AgentStateError(path, `must be an array, got ${describe(value)}`);
  return value;
}

export function stringAt(value: unknown, path: string, nonEmpty = false): string {
  if (typeof value !== 'string') throw new AgentStateError(path, `must be a string, got ${describe(value)}`);
  if (nonEmpty && value === '') throw new AgentStateError(path, 'must not be empty');
  return value;
}

export function optionalStringAt(value: unknown, path: string): void {
  if (value !== undefined) stringAt(value, path);
}

export function countAt(value: unknown, path: string, min = 0): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
    throw new AgentStateError(
      path,
      `must be an integer >= ${min}, got ${typeof value === 'number' ? value : describe(value)}`,
    );
  return value;
}

/**
 * Walks the whole value once: JSON types only, no `__proto__` key anywhere (a merge elsewhere could turn it into a
 * prototype), nesting at most MAX_DEPTH deep. Iterative, so a hostile depth cannot overflow the stack here.
 */
export function checkJsonTree(root: unknown, rootPath: string): void {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: root, path: rootPath, depth: 0 }];
  while (stack.length > 0) {
    const { value, path, depth } = stack.pop()!;
    if (value === null || typeof value === 'string' || typeof value === 'boolean') continue;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw new AgentStateError(path, 'must be a finite number');
      continue;
    }
    if (typeof value !== 'object') throw new AgentStateError(path, `must be JSON, got ${typeof value}`);
    if (depth >= MAX_DEPTH) throw new AgentStateError(path, `is nested deeper than ${MAX_DEPTH} levels`);
    if (Array.isArray(value)) {
      value.forEach((v, i) => stack.push({ value: v, path: `${path}[${i}]`, depth: depth + 1 }));
      continue;
    }
    objectAt(value, path);
    for (const [key, v] of Object.entries(value)) {
      if (key === '__proto__') throw new AgentStateError(`${path}.__proto__`, 'is not allowed');
      stack.push({ value: v, path: `${path}.${key}`, depth: depth + 1 });
    }
  }
}

/** The key as bytes; refused unless it is a string or bytes of at least 16 bytes. Never echoed in errors. */
export function stateKeyBytes(key: unknown, where: string): Uint8Array | undefined {
  if (key === undefined) return undefined;
  const bytes = typeof key === 'string' ? new TextEncoder().encode(key) : key instanceof Uint8Array ? key : undefined;
  if (!bytes || bytes.length < MIN_KEY_BYTES)
    throw new UtcpError(
      'INVALID_CONFIG',
      `${where}: stateKey must be a string or Uint8Array of at least ${MIN_KEY_BYTES} bytes`,
    );
  return bytes;
}

/** JSON with object keys sorted at every level, so a store that reorders keys (e.g. jsonb) keeps the MAC valid. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .filter((k) => (value as Obj)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Obj)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

function macOf(state: object, key: Uint8Array): Buffer {
  const { mac: _ignored, ...rest } = state as Obj;
  return createHmac('sha256', key).update(MAC_CONTEXT).update(canonicalJson(rest)).digest();
}

/** The state with `mac` set: HMAC-SHA-256 over its canonical JSON (without `mac`), hex. */
export function signState<T extends object>(state: T, key: Uint8Array): T & { mac: string } {
  return { ...state, mac: macOf(state, key).toString('hex') };
}

/** Refuses a state whose `mac` is missing or does not verify under `key` (constant-time comparison). */
export function verifyState(state: Obj, key: Uint8Array): void {
  const mac = state.mac;
  if (typeof mac !== 'string' || !/^[0-9a-f]{64}$/.test(mac))
    throw new AgentStateError(
      'state.mac',
      'is missing or malformed: a stateKey was given, so the state must be signed',
    );
  if (!timingSafeEqual(Buffer.from(mac, 'hex'), macOf(state, key)))
    throw new AgentStateError(
      'state.mac',
      'does not verify: the state was changed after it was signed (or signed with another key)',
    );
}

const STATE_KEYS = [
  'version',
  'settings',
  'messages',
  'steps',
  'usage',
  'step',
  'turn',
  'planned',
  'loadedTools',
  'mac',
] as const;
const COUNT_SETTINGS = {
  maxSteps: 0,
  maxToolsInline: 0,
  toolConcurrency: 1,
  maxToolOutputChars: 1,
  maxToolDescriptionChars: 1,
  toolTimeoutMs: 1,
} as const;
const SETTINGS_KEYS = ['system', 'tools', ...Object.keys(COUNT_SETTINGS)];

function checkSettings(value: unknown, path: string): void {
  const s = objectAt(value, path, SETTINGS_KEYS);
  optionalStringAt(s.system, `${path}.system`);
  if (s.tools !== undefined) arrayAt(s.tools, `${path}.tools`).forEach((t, i) => stringAt(t, `${path}.tools[${i}]`));
  for (const [key, min] of Object.entries(COUNT_SETTINGS))
    if (s[key] !== undefined) countAt(s[key], `${path}.${key}`, min);
}

function checkUsage(value: unknown, path: string, optional: boolean): void {
  if (optional && value === undefined) return;
  const u = objectAt(value, path);
  countAt(u.inputTokens, `${path}.inputTokens`);
  countAt(u.outputTokens, `${path}.outputTokens`);
  for (const key of ['cachedInputTokens', 'cacheWriteTokens', 'reasoningTokens'])
    if (u[key] !== undefined) countAt(u[key], `${path}.${key}`);
}

function checkMedia(value: unknown, path: string): void {
  if (value === undefined) return;
  arrayAt(value, path).forEach((m, i) => {
    const item = objectAt(m, `${path}[${i}]`);
    if (item.type !== 'image' && item.type !== 'audio')
      throw new AgentStateError(`${path}[${i}].type`, 'must be "image" or "audio"');
    stringAt(item.mediaType, `${path}[${i}].mediaType`);
    stringAt(item.data, `${path}[${i}].data`);
  });
}

function checkProviderData(value: unknown, path: string): void {
  if (value === undefined) return;
  const p = objectAt(value, path);
  stringAt(p.provider, `${path}.provider`);
  arrayAt(p.items, `${path}.items`);
}

export function checkToolCall(value: unknown, path: string): void {
  const c = objectAt(value, path);
  stringAt(c.id, `${path}.id`, true);
  stringAt(c.name, `${path}.name`, true);
  stringAt(c.arguments, `${path}.arguments`);
}

function checkToolCalls(value: unknown, path: string): void {
  arrayAt(value, path).forEach((c, i) => checkToolCall(c, `${path}[${i}]`));
}

function checkToolResult(value: unknown, path: string): void {
  const m = objectAt(value, path);
  if (m.type !== 'tool_result') throw new AgentStateError(`${path}.type`, 'must be "tool_result"');
  stringAt(m.toolCallId, `${path}.toolCallId`, true);
  stringAt(m.toolName, `${path}.toolName`);
  stringAt(m.content, `${path}.content`);
  if (typeof m.isError !== 'boolean') throw new AgentStateError(`${path}.isError`, 'must be a boolean');
  checkMedia(m.media, `${path}.media`);
}

/** One message of the conversation: only the four message types exist (a made-up role is refused). */
function checkMessage(value: unknown, path: string): void {
  const m = objectAt(value, path);
  switch (m.type) {
    case 'user':
      stringAt(m.text, `${path}.text`);
      checkMedia(m.media, `${path}.media`);
      return;
    case 'assistant':
      stringAt(m.text, `${path}.text`);
      checkProviderData(m.providerData, `${path}.providerData`);
      return;
    case 'tool_calls':
      stringAt(m.text, `${path}.text`);
      checkToolCalls(m.calls, `${path}.calls`);
      checkProviderData(m.providerData, `${path}.providerData`);
      return;
    case 'tool_result':
      checkToolResult(m, path);
      return;
    default:
      throw new AgentStateError(`${path}.type`, 'must be "user", "assistant", "tool_calls" or "tool_result"');
  }
}

function checkStep(value: unknown, path: string, expected: number): void {
  const s = objectAt(value, path);
  if (s.step !== expected) throw new AgentStateError(`${path}.step`, `must be ${expected} (steps are numbered from 1)`);
  stringAt(s.text, `${path}.text`);
  checkToolCalls(s.toolCalls, `${path}.toolCalls`);
  arrayAt(s.toolResults, `${path}.toolResults`).forEach((r, i) => checkToolResult(r, `${path}.toolResults[${i}]`));
  checkUsage(s.usage, `${path}.usage`, true);
  optionalStringAt(s.finishReason, `${path}.finishReason`);
}

const PLANNED_KEYS = {
  result: ['kind', 'message'],
  search: ['kind', 'call', 'args', 'query', 'limit'],
  call: ['kind', 'call', 'toolName', 'args', 'note'],
  pending: ['kind', 'call', 'toolName', 'args', 'reason'],
} as const;

function sameCall(a: Obj, b: Obj): boolean {
  return a.id === b.id && a.name === b.name && a.arguments === b.arguments;
}

/** One planned call; it must be about the turn's call at the same index (same id, name and arguments). */
function checkPlanned(value: unknown, path: string, call: Obj): void {
  const kind = objectAt(value, path).kind;
  if (kind !== 'result' && kind !== 'search' && kind !== 'call' && kind !== 'pending')
    throw new AgentStateError(`${path}.kind`, 'must be "result", "search", "call" or "pending"');
  const p = objectAt(value, path, PLANNED_KEYS[kind]);
  if (kind === 'result') {
    checkToolResult(p.message, `${path}.message`);
    if ((p.message as Obj).toolCallId !== call.id)
      throw new AgentStateError(`${path}.message.toolCallId`, 'does not answer the turn call at this index');
    return;
  }
  checkToolCall(p.call, `${path}.call`);
  if (!sameCall(p.call as Obj, call))
    throw new AgentStateError(`${path}.call`, 'is not the turn call at this index (id, name and arguments must match)');
  objectAt(p.args, `${path}.args`);
  if (kind === 'search') {
    stringAt(p.query, `${path}.query`);
    countAt(p.limit, `${path}.limit`, 1);
    return;
  }
  stringAt(p.toolName, `${path}.toolName`, true);
  if (kind === 'call') stringAt(p.note, `${path}.note`);
  else if (p.reason !== 'no_approver' && p.reason !== 'deferred' && p.reason !== 'unverified')
    throw new AgentStateError(`${path}.reason`, 'must be "no_approver", "deferred" or "unverified"');
}

/**
 * Checks a paused run's state field by field and for consistency: the steps are numbered 1..step-1, the last
 * message is the paused turn's tool calls, call ids are unique, and each planned call belongs to the turn call at
 * its index. Throws AgentStateError naming the first bad field. Run `checkJsonTree` first.
 */
export function checkRunStateShape(value: unknown): void {
  const s = objectAt(value, 'state', STATE_KEYS);
  if (s.version !== 1) throw new AgentStateError('state.version', 'must be 1 (the state of a paused AgentResult)');
  checkSettings(s.settings, 'state.settings');
  const messages = arrayAt(s.messages, 'state.messages');
  messages.forEach((m, i) => checkMessage(m, `state.messages[${i}]`));
  const step = countAt(s.step, 'state.step', 1);
  const steps = arrayAt(s.steps, 'state.steps');
  if (steps.length !== step - 1)
    throw new AgentStateError(
      'state.steps',
      `must hold the ${step - 1} steps before step ${step}, got ${steps.length}`,
    );
  steps.forEach((st, i) => checkStep(st, `state.steps[${i}]`, i + 1));
  checkUsage(s.usage, 'state.usage', false);
  const turn = objectAt(s.turn, 'state.turn', ['text', 'toolCalls', 'usage', 'finishReason']);
  stringAt(turn.text, 'state.turn.text');
  checkToolCalls(turn.toolCalls, 'state.turn.toolCalls');
  checkUsage(turn.usage, 'state.turn.usage', true);
  optionalStringAt(turn.finishReason, 'state.turn.finishReason');
  const calls = turn.toolCalls as Obj[];
  if (calls.length === 0)
    throw new AgentStateError('state.turn.toolCalls', 'must not be empty (a run pauses on calls)');
  const ids = new Set<unknown>();
  calls.forEach((c, i) => {
    if (ids.has(c.id)) throw new AgentStateError(`state.turn.toolCalls[${i}].id`, 'repeats an earlier call id');
    ids.add(c.id);
  });
  const last = messages.at(-1) as Obj | undefined;
  const lastCalls = last?.type === 'tool_calls' ? (last.calls as Obj[]) : undefined;
  if (!lastCalls || lastCalls.length !== calls.length || !lastCalls.every((c, i) => sameCall(c, calls[i])))
    throw new AgentStateError('state.messages', "must end with the paused turn's tool calls (state.turn.toolCalls)");
  const planned = arrayAt(s.planned, 'state.planned');
  if (planned.length !== calls.length)
    throw new AgentStateError('state.planned', `must hold one entry per call of the turn (${calls.length})`);
  planned.forEach((p, i) => checkPlanned(p, `state.planned[${i}]`, calls[i]));
  arrayAt(s.loadedTools, 'state.loadedTools').forEach((n, i) => stringAt(n, `state.loadedTools[${i}]`));
}

/**
 * A private copy of the caller's value (a string is parsed as JSON): what is checked is what is used, even if the
 * caller's object changes later or reads differently each time (getters).
 */
function snapshot(value: unknown, path: string): unknown {
  try {
    return typeof value === 'string' ? JSON.parse(value) : structuredClone(value);
  } catch {
    throw new AgentStateError(
      path,
      typeof value === 'string' ? 'is not valid JSON' : 'is not plain JSON data (or is nested too deeply to copy)',
    );
  }
}

/**
 * The state as a checked copy: JSON (a string is parsed), no prototype keys or hostile nesting, the MAC verified
 * when a key is given, then every field and the state's consistency. Nothing is read from it before this.
 * `State` is `AgentRunState`, named by the caller so that this file does not import `run-agent.ts` (which imports it).
 */
export function checkState<State extends object>(
  state: unknown,
  key: Uint8Array | undefined,
): { state: State; signed: boolean } {
  const s = snapshot(state, 'state');
  checkJsonTree(s, 'state');
  if (key) verifyState(objectAt(s, 'state'), key);
  checkRunStateShape(s);
  return { state: s as State, signed: key !== undefined };
}

/** The decisions as a checked copy: a plain object of well-formed decisions, no `__proto__` key anywhere. */
export function checkDecisions(decisions: unknown): Record<string, ApprovalDecision> {
  const d = objectAt(snapshot(decisions, 'decisions'), 'decisions');
  checkJsonTree(d, 'decisions');
  for (const [id, decision] of Object.entries(d)) {
    checkDecision(decision as ApprovalDecision, `resumeAgent: decisions[${JSON.stringify(id)}]`);
    const reason = (decision as { reason?: unknown }).reason;
    if (reason !== undefined && typeof reason !== 'string')
      throw new UtcpError('INVALID_CONFIG', `resumeAgent: decisions[${JSON.stringify(id)}].reason must be a string`);
  }
  return d as Record<string, ApprovalDecision>;
}
