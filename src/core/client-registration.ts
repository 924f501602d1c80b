/**
 * Manual registration of the UTCP client (docs/design/README.md#client-layout): template checks, discovery through
 * the transport, the per-tool validation loop, allowed protocols, dropped tools, deregistration and refresh. Works
 * on the client's shared state (`client-core.ts`); `UtcpClientBase` (`client.ts`) exposes it.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { templateResilience } from './resilience.js';
import { ClientCore, remoteTemplate, requireString } from './client-core.js';
import type { DirectFunction, RegisterOptions } from './client-types.js';
import { createDeadline, settleError, validMs } from './deadline.js';
import { UtcpError, UtcpValidationError, formatIssues } from './errors.js';
import { documentType, normalizeManual } from './legacy.js';
import { openTrace, tracing, type TraceStart } from './tracing.js';
import type { CallOptions, Transport } from './transport.js';
import type { CallTemplateBase, RegisterManualResult, Tool, UtcpManual } from './types.js';
import { plainValidTool, validateCallTemplate, validateToolFully } from './validate.js';
import { collectTemplateVariables, sanitizeManualName } from './variables.js';
import { errorMessage } from './guards.js';

interface DiscoveredManual {
  manual: UtcpManual;
  warnings: string[];
  allowed: ReadonlySet<string>;
  /** Full tool name → why it was left out. */
  dropped: Map<string, string>;
  /** How many tools the document listed. */
  offered: number;
  /** The document came from a remote origin (provenance, docs/design/threat-model.md#remote-loopback-call-time). */
  remoteSource: boolean;
}

const FAILED_MANUAL: UtcpManual = Object.freeze({
  utcp_version: '1.0.0',
  manual_version: '0.0.0',
  tools: Object.freeze([]) as unknown as Tool[],
});

/** The call template types a manual document names (its own and its tools' `call_template_type`), each once. */
function namedTypes(doc: unknown): Set<unknown> {
  const types = new Set<unknown>([documentType(doc)]);
  const tools = (doc as { tools?: unknown } | null)?.tools;
  if (Array.isArray(tools))
    for (let i = 0; i < tools.length; i++)
      types.add(
        (tools[i] as { tool_call_template?: { call_template_type?: unknown } } | null)?.tool_call_template
          ?.call_template_type,
      );
  return types;
}

/**
 * The namespaced variable keys a manual template needs; when the template references none,
 * discovery runs and the keys referenced by its tool templates are returned.
 */
export async function getRequiredVariablesForManualAndTools(
  core: ClientCore,
  template: CallTemplateBase | Record<string, unknown>,
): Promise<string[]> {
  core.assertOpen();
  const normalized = (await core.normalizeTemplate(template, [])) as unknown as CallTemplateBase;
  const issues = validateCallTemplate(normalized, '', { templates: core.templates });
  if (issues.length > 0) throw new UtcpValidationError('manual call template', issues);
  const name = normalized.name ? sanitizeManualName(normalized.name) : randomUUID().replace(/-/g, '');
  const raw = { ...normalized, name };
  const keys = collectTemplateVariables(raw, name);
  const transport = await core.transport(raw.call_template_type);
  const signal = core.closing.signal;
  try {
    // The tools' own variables too (an OpenAPI spec's schemes, its base-URL variable), not only the template's.
    const { manual } = await discover(core, transport, raw, raw, name, signal);
    for (const tool of manual.tools) collectTemplateVariables(tool.tool_call_template, name, keys);
  } catch (error) {
    // Discovery may need the template's own variables: then those are the answer.
    if (keys.length === 0) throw error;
  } finally {
    if (!(await core.repo.getManual(name)))
      await transport.deregisterManual?.(raw, { manualName: name }).catch(() => {});
  }
  return keys;
}

/**
 * Discovers and stores the tools of one manual. Never throws for a bad manual: the result says
 * `success: false` with `errors`, and nothing is stored. Tools that cannot be parsed are skipped with a warning.
 * Traced as one `register_manual` span when someone listens (docs/design/observability.md#register-spans).
 */
export function registerManual(
  core: ClientCore,
  template: CallTemplateBase | Record<string, unknown>,
  options: RegisterOptions,
): Promise<RegisterManualResult> {
  if (!tracing('register')) return registerUntraced(core, template, options);
  return registerTraced(core, template, options);
}

function registerTraceStart(template: unknown): TraceStart {
  const t = (typeof template === 'object' && template !== null ? template : {}) as Record<string, unknown>;
  const manual = typeof t.name === 'string' && t.name !== '' ? sanitizeManualName(t.name) : undefined;
  const type = typeof t.call_template_type === 'string' ? t.call_template_type : undefined;
  return {
    name: manual ? `register_manual ${manual}` : 'register_manual',
    attributes: { 'utcp.manual.name': manual, 'utcp.call_template_type': type },
    message: { manual, callTemplateType: type },
  };
}

async function registerTraced(
  core: ClientCore,
  template: CallTemplateBase | Record<string, unknown>,
  options: RegisterOptions,
): Promise<RegisterManualResult> {
  const trace = await openTrace('register', () => registerTraceStart(template));
  if (!trace) return registerUntraced(core, template, options);
  try {
    const result = await registerUntraced(core, template, options);
    const raw = result.manualCallTemplate as Partial<CallTemplateBase> | undefined;
    const manual = typeof raw?.name === 'string' ? raw.name : undefined;
    const type = typeof raw?.call_template_type === 'string' ? raw.call_template_type : undefined;
    if (manual) trace.rename(`register_manual ${manual}`);
    const outcome = result.success ? 'ok' : 'error';
    const toolCount = result.success ? result.manual.tools.length : undefined;
    trace.set(
      {
        'utcp.manual.name': manual,
        'utcp.call_template_type': type,
        'utcp.tool.count': toolCount,
        'utcp.outcome': outcome,
      },
      { manual, callTemplateType: type, toolCount, outcome },
    );
    // A failed registration is a result, not a throw; its messages stay out of the span (they may quote values).
    if (!result.success) trace.fail(undefined, 'registration_failed');
    return result;
  } catch (error) {
    trace.set({ 'utcp.outcome': 'error' }, { outcome: 'error' });
    trace.fail(error);
    throw error;
  } finally {
    trace.end();
  }
}

async function registerUntraced(
  core: ClientCore,
  template: CallTemplateBase | Record<string, unknown>,
  options: RegisterOptions,
): Promise<RegisterManualResult> {
  core.assertOpen();
  const warnings: string[] = [];
  const fail = (raw: CallTemplateBase, errors: string[], cause?: unknown): RegisterManualResult => {
    for (const e of errors) core.logger.warn(`Manual ${raw?.name ?? '(unnamed)'} not registered: ${e}`);
    const result: RegisterManualResult = {
      manualCallTemplate: raw,
      manual: FAILED_MANUAL,
      success: false,
      errors,
      warnings,
    };
    if (UtcpError.isInstance(cause)) result.errorCode = cause.code;
    return result;
  };
  let normalized: Record<string, unknown>;
  try {
    normalized = await core.normalizeTemplate(template, warnings, 'manual call template');
  } catch (error) {
    return fail(template as CallTemplateBase, [errorMessage(error)], error);
  }
  const issues = validateCallTemplate(normalized, '', { templates: core.templates });
  if (issues.length > 0)
    return fail(normalized as unknown as CallTemplateBase, [`Invalid manual call template: ${formatIssues(issues)}`]);

  const name =
    typeof normalized.name === 'string' && normalized.name !== ''
      ? sanitizeManualName(normalized.name)
      : randomUUID().replace(/-/g, '');
  const raw = { ...normalized, name } as CallTemplateBase;
  const taken = () => fail(raw, [`Manual ${name} already registered; deregister it first or choose another name`]);
  // Check-and-reserve happens synchronously, so concurrent registrations of one name cannot both pass.
  if (core.reserved.has(name)) return taken();
  core.reserved.add(name);
  let transport: Transport | undefined;
  try {
    const stored = await core.repo.getManual(name);
    if (stored) {
      const ttl = core.repo.discoveryTtlMs;
      // A shared catalog (docs/design/repository-postgres.md): the same template registered elsewhere is reused while fresh.
      if (ttl === undefined || !isDeepStrictEqual(stored.template, raw)) {
        core.reserved.delete(name);
        return taken();
      }
      if (!options.refresh && ttl > 0 && stored.savedAt !== undefined && Date.now() - stored.savedAt < ttl) {
        core.allowed.set(name, new Set(stored.allowedProtocols ?? core.allowedProtocols(raw, false)));
        core.logger.info(`Reused stored manual ${name} with ${stored.manual.tools.length} tools`);
        return { manualCallTemplate: raw, manual: stored.manual, success: true, errors: [], warnings };
      }
    }
    const substituted = core.substitute(raw, name);
    transport = await core.transport(raw.call_template_type);
    const deadline = createDeadline(
      [core.closing.signal, options.signal],
      options.timeoutMs,
      `Discovery of manual ${name}`,
    );
    let discovered;
    try {
      discovered = await discover(core, transport, substituted, raw, name, deadline.signal, options.timeoutMs);
    } finally {
      deadline.dispose();
    }
    warnings.push(...discovered.warnings);
    core.assertOpen();
    await core.repo.saveManual(name, raw, discovered.manual, { allowedProtocols: [...discovered.allowed] });
    core.allowed.set(name, discovered.allowed);
    noteDropped(core, name, discovered);
    core.remote.set(name, discovered.remoteSource);
    core.manualResilience.set(name, templateResilience(raw) ?? null);
    core.logger.info(`Registered manual ${name} with ${discovered.manual.tools.length} tools`);
    // Timeouts taken as seconds change behaviour silently otherwise (docs/design/transports.md#timeout-units).
    for (const w of warnings) if (w.includes(' read as seconds ')) core.logger.warn(`Manual ${name}: ${w}`);
    return { manualCallTemplate: raw, manual: discovered.manual, success: true, errors: [], warnings };
  } catch (error) {
    if (transport?.deregisterManual) await transport.deregisterManual(raw, { manualName: name }).catch(() => {});
    return fail(raw, [core.redactor.text(errorMessage(error))], error);
  } finally {
    core.reserved.delete(name);
  }
}

async function discover(
  core: ClientCore,
  transport: Transport,
  substituted: CallTemplateBase,
  raw: CallTemplateBase,
  name: string,
  signal: AbortSignal,
  timeoutMs?: number,
): Promise<DiscoveredManual> {
  const options: CallOptions = {
    signal,
    manualName: name,
    rawTemplate: raw,
    timeoutMs,
    deadline: validMs(timeoutMs) ? Date.now() + timeoutMs : undefined,
  };
  let result;
  try {
    result = await transport.registerManual(substituted, options);
  } catch (error) {
    throw settleError(error, signal, `Discovery of manual ${name}`, timeoutMs);
  }
  const warnings = [...(result.warnings ?? [])];
  const normalized = await core.templates.prepared(
    () => {
      const notes: string[] = [];
      return {
        doc: normalizeManual(result.manual, raw as unknown as Record<string, unknown>, notes, core.templates) as Record<
          string,
          unknown
        >,
        notes,
      };
    },
    ({ doc }) => namedTypes(doc),
    namedTypes(result.manual),
  );
  warnings.push(...normalized.notes);
  const doc = normalized.doc;
  if (typeof doc !== 'object' || doc === null || !Array.isArray(doc.tools)) {
    throw new UtcpValidationError('manual', [{ path: 'tools', message: 'required (an array of tools)' }]);
  }
  const allowed = core.allowedProtocols(raw, result.openapi === true);
  const { tools, dropped } = keepTools(doc.tools as unknown[], name, allowed, { templates: core.templates }, warnings);
  const manual: UtcpManual = {
    utcp_version: typeof doc.utcp_version === 'string' ? doc.utcp_version : '1.0.0',
    manual_version: typeof doc.manual_version === 'string' ? doc.manual_version : '1.0.0',
    tools,
  };
  return {
    manual,
    warnings,
    allowed,
    dropped,
    offered: (doc.tools as unknown[]).length,
    remoteSource: result.remoteSource ?? remoteTemplate(raw),
  };
}

/**
 * The tools of a discovered document that the manual keeps: each checked (plainValidTool for the usual tool, else
 * validateToolFully, which names each problem) and named `<manual>.<name>`;
 * invalid ones skipped, ones of a protocol the manual does not allow dropped (`dropped`: full name → why), repeated
 * names kept once, each with a warning. A plain loop in a function of its own: V8 optimises it while it runs on a
 * large manual (docs/design/performance.md#cold-registration).
 */
function keepTools(
  listed: readonly unknown[],
  name: string,
  allowed: ReadonlySet<string>,
  validation: { templates: ClientCore['templates'] },
  warnings: string[],
): { tools: Tool[]; dropped: Map<string, string> } {
  const tools: Tool[] = [];
  const seen = new Set<string>();
  const dropped = new Map<string, string>();
  const protocolFix = `add them to the manual template's allowed_communication_protocols`;
  const prefix = `${name}.`;
  for (let i = 0; i < listed.length; i++) {
    const value = listed[i];
    let tool = plainValidTool(value, validation);
    if (!tool) {
      const checked = validateToolFully(value, i, validation);
      if (!checked.tool) {
        warnings.push(
          `Skipped tool ${i}${typeof (value as Tool)?.name === 'string' ? ` (${(value as Tool).name})` : ''}: ${formatIssues(checked.issues)}`,
        );
        continue;
      }
      tool = checked.tool;
    }
    const type = tool.tool_call_template.call_template_type;
    const full = tool.name.startsWith(prefix) ? tool.name : prefix + tool.name;
    if (!allowed.has(type)) {
      const reason = `protocol "${type}" is not in allowed_communication_protocols [${[...allowed].join(', ')}] of manual ${name}`;
      warnings.push(`Dropped tool ${tool.name}: ${reason}; to keep such tools, ${protocolFix}`);
      dropped.set(full, `it was dropped when manual ${name} registered: ${reason}`);
      continue;
    }
    if (seen.has(full)) {
      warnings.push(`Duplicate tool name ${full}: the first definition wins`);
      continue;
    }
    seen.add(full);
    tool.name = full; // plainValidTool and validateToolFully return a fresh object
    tools.push(tool);
  }
  return { tools, dropped };
}

/** Remembers dropped tools and says loudly (logger warn) when a manual keeps fewer tools than it offered. */
function noteDropped(core: ClientCore, name: string, discovered: DiscoveredManual): void {
  if (discovered.dropped.size > 0) core.dropped.set(name, discovered.dropped);
  else core.dropped.delete(name);
  const kept = discovered.manual.tools.length;
  if (kept < discovered.offered) {
    const types = [
      ...new Set([...discovered.dropped.values()].map((r) => /protocol "([^"]+)"/.exec(r)?.[1]).filter(Boolean)),
    ];
    const how = types.length
      ? `; allow ${types.map((t) => `"${t}"`).join(', ')} in its allowed_communication_protocols to keep them`
      : '';
    core.logger.warn(`Manual ${name} keeps ${kept} of its ${discovered.offered} tools${how}`, {
      manual: name,
      kept,
      offered: discovered.offered,
      warnings: discovered.warnings.length,
    });
  }
}

/**
 * Registers in-process functions as the tools of one manual (`<manualName>.<fn.name>`),
 * so agents can mix local and remote tools.
 */
export async function registerFunctions(
  core: ClientCore,
  manualName: string,
  functions: readonly DirectFunction[],
  register: (template: CallTemplateBase) => Promise<RegisterManualResult>,
): Promise<RegisterManualResult> {
  core.assertOpen();
  const name = sanitizeManualName(requireString(manualName, 'A manual name'));
  if (!Array.isArray(functions))
    throw new UtcpError('INVALID_ARGUMENTS', `registerFunctions(${name}) takes an array of functions`);
  const added: string[] = [];
  for (const fn of functions) {
    if (typeof fn !== 'object' || fn === null)
      throw new UtcpError('INVALID_MANUAL', `registerFunctions(${name}): each function must be an object`);
    if (typeof fn.handler !== 'function')
      throw new UtcpError('INVALID_MANUAL', `Function ${fn.name}: handler must be a function`);
    const key = `${name}.${fn.name}`;
    if (core.callables.has(key)) continue;
    core.callables.set(key, {
      callable: fn.handler,
      description: fn.description,
      inputs: fn.inputs,
      outputs: fn.outputs,
      tags: fn.tags,
      manual: name,
    });
    added.push(key);
  }
  const result = await register({ name, call_template_type: 'direct' });
  if (!result.success) for (const key of added) core.callables.delete(key);
  return result;
}

/** Removes a manual and its tools and frees its sessions. Returns false when unknown. */
export async function deregisterManual(core: ClientCore, name: string): Promise<boolean> {
  const stored = await core.repo.getManual(name);
  if (!stored) return false;
  await core.repo.removeManual(name);
  core.allowed.delete(name);
  core.dropped.delete(name);
  core.remote.delete(name);
  core.manualResilience.delete(name);
  core.limiters.delete(name);
  if (stored.template.call_template_type === 'direct') {
    for (const [key, entry] of core.callables) if (entry.manual === name) core.callables.delete(key);
  }
  const types = new Set([
    stored.template.call_template_type,
    ...stored.manual.tools.map((t) => t.tool_call_template.call_template_type),
  ]);
  for (const type of types) {
    const t = core.transports.get(type);
    if (!t) continue;
    const transport = await t.catch(() => undefined);
    await transport
      ?.deregisterManual?.(stored.template, { manualName: name })
      .catch((e) => core.logger.warn(`Deregistering ${name} from ${type} failed`, { error: errorMessage(e) }));
  }
  return true;
}

/** Re-runs discovery for a registered manual and swaps its tools in at once. */
export async function refreshManual(
  core: ClientCore,
  name: string,
  options: RegisterOptions,
): Promise<RegisterManualResult> {
  core.assertOpen();
  const stored = await core.repo.getManual(name);
  if (!stored) throw new UtcpError('MANUAL_NOT_FOUND', `Manual not found: ${name}`);
  const raw = stored.template;
  try {
    const transport = await core.transport(raw.call_template_type);
    const deadline = createDeadline(
      [core.closing.signal, options.signal],
      options.timeoutMs,
      `Discovery of manual ${name}`,
    );
    let discovered;
    try {
      discovered = await discover(
        core,
        transport,
        core.substitute(raw, name),
        raw,
        name,
        deadline.signal,
        options.timeoutMs,
      );
    } finally {
      deadline.dispose();
    }
    if (await core.repo.getManual(name)) {
      await core.repo.saveManual(name, raw, discovered.manual, { allowedProtocols: [...discovered.allowed] });
      core.allowed.set(name, discovered.allowed);
      noteDropped(core, name, discovered);
      core.remote.set(name, discovered.remoteSource);
      core.manualResilience.set(name, templateResilience(raw) ?? null);
    }
    return {
      manualCallTemplate: raw,
      manual: discovered.manual,
      success: true,
      errors: [],
      warnings: discovered.warnings,
    };
  } catch (error) {
    return {
      manualCallTemplate: raw,
      manual: stored.manual,
      success: false,
      errors: [core.redactor.text(errorMessage(error))],
      warnings: [],
    };
  }
}
