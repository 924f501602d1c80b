/**
 * utcp-kit/tools: a workspace-rooted coding toolset (read, write, write_append, edit, apply_patch, grep, glob,
 * ls, bash, bash_output, stop_process, list_processes, web_fetch, the plan tools, web_search) registered on a client as an ordinary manual
 * of `direct` tools. Invariants and sandbox: docs/design/code-tools.md.
 */
import { randomBytes } from 'node:crypto';
import { access, realpath, stat } from 'node:fs/promises';
import { constants } from 'node:fs';
import { UtcpError, type DirectFunction, type RegisterManualResult, type UtcpClient } from '../index.js';
import { buildChildEnv, DEFAULT_UNIX_ALLOWLIST } from '../internal.js';
import { DEFAULT_LIMITS, type CodeToolsContext, type CodeToolsLimits } from './context.js';
import { HttpGetter, webFetchTool } from './fetch.js';
import { appendTool, editTool, readTool, writeTool } from './files.js';
import { applyPatchTool } from './patch.js';
import { DEFAULT_COMMAND_POLICY, prepareCommandPolicy, type PolicyRule } from './policy.js';
import { ProcessManager, processTools } from './processes.js';
import { chooseSandbox, type SandboxMode } from './sandbox.js';
import { globTool, grepTool, lsTool, ripgrepLocator } from './search.js';
import { requireToolLibraries } from './libraries.js';
import { planTools } from './plan.js';
import { webSearchTool, WEB_SEARCH_MAX_RESULTS, type WebSearchOptions } from './web-search.js';
import { Workspace } from './workspace.js';
import { errorMessage } from '../internal.js';

export type { CodeToolsLimits } from './context.js';
export type { PolicyRule } from './policy.js';
export type { SandboxMode } from './sandbox.js';
export type { PlanStatus, PlanStep } from './plan.js';
export type { WebSearchOptions } from './web-search.js';
export { DEFAULT_COMMAND_POLICY, policyViolation } from './policy.js';

/** Every tool name, in the order they are registered. */
export const CODE_TOOL_NAMES = [
  'read',
  'write',
  'write_append',
  'edit',
  'apply_patch',
  'grep',
  'glob',
  'ls',
  'bash',
  'bash_output',
  'stop_process',
  'list_processes',
  'web_fetch',
  'save_plan',
  'save_plan_append',
  'update_plan',
  'web_search',
] as const;
export type CodeToolName = (typeof CODE_TOOL_NAMES)[number];

const PROCESS_TOOLS: readonly CodeToolName[] = ['bash', 'bash_output', 'stop_process', 'list_processes'];

export interface CodeToolsOptions {
  /** The workspace: every path resolves inside it. Must be an existing directory other than `/`. */
  root: string;
  /** Manual name; tools are `<manualName>.read`, ... @default 'code' */
  manualName?: string;
  /**
   * `auto`: bubblewrap when it works here (probed once); where it does not, registration fails with
   * NOT_SUPPORTED unless `dangerouslyRunUnsandboxed` is set. `bwrap`: required (registration fails without it).
   * `none`: no kernel sandbox; needs `dangerouslyRunUnsandboxed` too. @default 'auto'
   */
  sandbox?: 'auto' | 'bwrap' | 'none';
  /**
   * Opt in to running `bash` without a kernel sandbox (`sandbox: 'none'`, or `auto` where no sandbox works).
   * Model-written commands then run with every right of the host user: they read and write all of that user's
   * files, read the secrets in the environment of the host process and of every other process of that user
   * (`/proc/<pid>/environ`), reach the network, loopback services and local UNIX sockets (Docker, D-Bus), and
   * can leave processes running after `close()`. Without it, `bash` only ever runs sandboxed
   * (docs/design/code-tools.md#unsandboxed). @default false
   */
  dangerouslyRunUnsandboxed?: boolean;
  /** Let sandboxed commands use the network. @default false */
  network?: boolean;
  /** Extra paths the sandbox mounts read-write (caches such as ~/.npm). @default none */
  writablePaths?: string[];
  /**
   * Host variables `bash` inherits (exported shell functions, `BASH_FUNC_*`, never are). TMPDIR is inherited
   * only without the sandbox, which gives commands a private /tmp (docs/design/code-tools.md#environment).
   * @default the child-process allowlist of the cli transport (PATH, HOME, LANG, LC_ALL, LC_CTYPE, USER, LOGNAME, SHELL, TZ, TERM) and TMPDIR
   */
  envAllowlist?: string[];
  /** Extra variables for `bash` (after the allow-list); a `BASH_FUNC_*` name is refused. */
  env?: Record<string, string>;
  /** Shell for `bash`. @default /bin/bash, else /bin/sh; without either (Windows) the process tools are left out */
  shell?: string;
  /** Foreground wait of `bash` before a command moves to the background, in ms. @default 30_000 (max 600_000) */
  bashTimeoutMs?: number;
  /** SIGTERM → SIGKILL grace period, in ms. @default 2000 */
  killGraceMs?: number;
  /** Most background processes alive at once. @default 16 */
  maxProcesses?: number;
  /** Rules added to the built-in command policy (which always applies). */
  extraCommandRules?: PolicyRule[];
  /** ripgrep binary for `grep`: a path, or false for the built-in search. @default 'rg' when installed */
  ripgrep?: string | false;
  /** Path of the bwrap binary. @default found on PATH */
  bwrapPath?: string;
  /** `web_fetch` deadline in ms. @default 30_000 */
  fetchTimeoutMs?: number;
  /** Register only these tools. @default all of CODE_TOOL_NAMES */
  tools?: readonly CodeToolName[];
  /** Output and size caps. */
  limits?: Partial<CodeToolsLimits>;
  /** Directory of the plan tools' markdown plans, inside the workspace. @default '.plans' */
  plansDir?: string;
  /** A SearXNG-compatible search endpoint for `web_search`, which is registered only when this is set. */
  webSearch?: WebSearchOptions;
}

/** What `registerCodeTools` returns. */
export interface CodeTools {
  manualName: string;
  /** Full tool names (`code.read`, ...). */
  toolNames: string[];
  /** Real path of the workspace root. */
  root: string;
  /** The sandbox `bash` runs under. */
  sandbox: SandboxMode;
  /** Why the sandbox is `none` when `auto` was asked. */
  sandboxReason?: string;
  /** The registration result. */
  registration: RegisterManualResult;
  /** Stops every process the tools started (also done by `client.close()`). */
  stopAll(): Promise<void>;
}

/** The child-process allowlist every transport uses, and TMPDIR (docs/design/code-tools.md#environment). */
const DEFAULT_ENV: readonly string[] = [...DEFAULT_UNIX_ALLOWLIST, 'TMPDIR'];

function invalid(message: string): UtcpError {
  return new UtcpError('INVALID_CONFIG', `registerCodeTools: ${message}`);
}

function positiveInt(
  value: number | undefined,
  name: string,
  fallback: number,
  max = Number.MAX_SAFE_INTEGER,
  min = 1,
): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max)
    throw invalid(`${name} must be an integer from ${min} to ${max}`);
  return value;
}

async function pickShell(requested: string | undefined): Promise<string> {
  const candidates = requested ? [requested] : ['/bin/bash', '/bin/sh'];
  for (const c of candidates)
    if (
      await access(c, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return c;
  throw invalid(requested ? `shell ${requested} is not an executable file` : 'no /bin/bash or /bin/sh found');
}

/**
 * Registers the coding toolset on `client` as the manual `manualName` (default `code`). Everything the tools
 * start is stopped by `client.close()`. Registration is all or nothing.
 * @throws UtcpError INVALID_CONFIG for bad options (and `sandbox: 'none'` without `dangerouslyRunUnsandboxed`),
 * NOT_SUPPORTED when `sandbox: 'bwrap'` cannot run, or `auto` finds no sandbox and `dangerouslyRunUnsandboxed` is
 * not set, MANUAL_EXISTS-style failures of registration
 */
export async function registerCodeTools(client: UtcpClient, options: CodeToolsOptions): Promise<CodeTools> {
  if (!options || typeof options.root !== 'string' || options.root === '')
    throw invalid('root must be the path of the workspace directory');
  const manualName = options.manualName ?? 'code';
  const requested = options.sandbox ?? 'auto';
  if (!['auto', 'bwrap', 'none'].includes(requested))
    throw invalid(`sandbox must be 'auto', 'bwrap' or 'none', not ${JSON.stringify(requested)}`);
  const unsandboxed = options.dangerouslyRunUnsandboxed ?? false;
  if (typeof unsandboxed !== 'boolean')
    throw invalid(`dangerouslyRunUnsandboxed must be true or false, not ${JSON.stringify(unsandboxed)}`);
  const rootReal = await realpath(options.root).catch(() => undefined);
  if (!rootReal || !(await stat(rootReal)).isDirectory())
    throw invalid(`root ${options.root} is not an existing directory`);
  if (rootReal === '/') throw invalid('root must not be / (the whole file system)');
  const limits: CodeToolsLimits = { ...DEFAULT_LIMITS };
  for (const [key, value] of Object.entries(options.limits ?? {})) {
    if (!(key in DEFAULT_LIMITS)) throw invalid(`unknown limit ${key}`);
    limits[key as keyof CodeToolsLimits] = positiveInt(
      value,
      `limits.${key}`,
      DEFAULT_LIMITS[key as keyof CodeToolsLimits],
    );
  }
  const wanted = new Set<string>(options.tools ?? CODE_TOOL_NAMES);
  for (const t of wanted)
    if (!(CODE_TOOL_NAMES as readonly string[]).includes(t))
      throw invalid(`unknown tool ${t}; known: ${CODE_TOOL_NAMES.join(', ')}`);
  // web_search needs an endpoint: without one it is left out, or refused when asked for by name.
  const webSearch = options.webSearch;
  if (webSearch !== undefined) {
    if (typeof webSearch?.url !== 'string' || !/^https?:\/\//i.test(webSearch.url))
      throw invalid('webSearch.url must be the http(s) base URL of a SearXNG-compatible endpoint');
    positiveInt(webSearch.defaultResults, 'webSearch.defaultResults', 10, WEB_SEARCH_MAX_RESULTS);
  } else if (options.tools?.includes('web_search'))
    throw invalid('web_search needs webSearch: { url } (a SearXNG-compatible endpoint)');
  else wanted.delete('web_search');
  const plansDir = options.plansDir ?? '.plans';
  if (typeof plansDir !== 'string' || plansDir === '' || plansDir.includes('\0'))
    throw invalid('plansDir must be a directory path inside the workspace');
  const writable: string[] = [];
  for (const p of options.writablePaths ?? []) {
    const real = await realpath(p).catch(() => undefined);
    if (!real) throw invalid(`writablePaths entry ${p} does not exist`);
    writable.push(real);
  }

  // Before anything starts, so a missing library fails the registration (docs/design/packaging.md#missing-library).
  await requireToolLibraries(wanted);

  // Without a POSIX shell (Windows) the process tools are left out, unless they were asked for by name.
  let shell = '/bin/sh';
  let noShell: string | undefined;
  try {
    shell = await pickShell(options.shell);
  } catch (error) {
    if (options.shell !== undefined || options.tools !== undefined) throw error;
    noShell = (error as Error).message.replace(/^registerCodeTools: /, '');
    for (const t of PROCESS_TOOLS) wanted.delete(t);
  }
  const needsShell = wanted.has('bash');
  let sandbox;
  try {
    sandbox = needsShell
      ? await chooseSandbox(requested, rootReal, shell, options.bwrapPath)
      : { mode: 'none' as const, reason: noShell ? `bash is not available: ${noShell}` : 'bash is not registered' };
  } catch (error) {
    throw new UtcpError('NOT_SUPPORTED', `registerCodeTools: ${errorMessage(error)}`);
  }

  // The built-in command rules run on the linear-time engine (docs/design/security.md#untrusted-regex).
  if (needsShell) await prepareCommandPolicy();
  if (needsShell && sandbox.mode === 'none' && !unsandboxed) {
    const exposure =
      'every file this user can read or write, the secrets in the environment of its processes (/proc/<pid>/environ), the network and local services';
    if (requested === 'none')
      throw invalid(
        `sandbox: 'none' runs model-written commands with all the rights of this user (${exposure}); to accept that, also pass dangerouslyRunUnsandboxed: true. For a kernel sandbox use sandbox: 'auto' or 'bwrap' on Linux with bubblewrap (apt-get install bubblewrap)`,
      );
    throw new UtcpError(
      'NOT_SUPPORTED',
      `registerCodeTools: bash has no kernel sandbox here (${sandbox.reason}). Install bubblewrap and allow unprivileged user namespaces (Linux, x86_64 or aarch64), or leave bash out (tools: [...] without the process tools), or pass dangerouslyRunUnsandboxed: true to run commands with all the rights of this user (${exposure})`,
    );
  }

  // One environment builder for every child the library starts (docs/design/security.md#child-env). Under the
  // sandbox /tmp is private, so a host TMPDIR elsewhere would name a directory the command cannot write.
  const allowlist = options.envAllowlist ?? DEFAULT_ENV;
  const inherit = Array.isArray(allowlist)
    ? allowlist.filter((name) => name !== 'TMPDIR' || sandbox.mode !== 'bwrap')
    : allowlist;
  const env = buildChildEnv({
    hostEnv: process.env,
    inherit,
    envVars: options.env,
    platform: process.platform,
    what: 'registerCodeTools',
    fields: { inherit: 'envAllowlist', envVars: 'env' },
    errorCode: 'INVALID_CONFIG',
  });

  const workspace = new Workspace(options.root);
  const ctx: CodeToolsContext = { workspace, limits };
  const processOptions = {
    shell,
    sandbox,
    writable,
    network: options.network ?? false,
    env,
    killGraceMs: positiveInt(options.killGraceMs, 'killGraceMs', 2000, 600_000, 0),
    policy: [...DEFAULT_COMMAND_POLICY, ...(options.extraCommandRules ?? [])],
    maxTimeoutMs: 600_000,
    defaultTimeoutMs: positiveInt(options.bashTimeoutMs, 'bashTimeoutMs', 30_000, 600_000),
    maxProcesses: positiveInt(options.maxProcesses, 'maxProcesses', 16, 1000),
    marker: randomBytes(8).toString('hex'),
  };
  const processes = new ProcessManager(ctx, processOptions);
  const getter = new HttpGetter(limits.fetchBytes);
  const all: DirectFunction[] = [
    readTool(ctx),
    writeTool(ctx),
    appendTool(ctx),
    editTool(ctx),
    applyPatchTool(ctx),
    grepTool(ctx, ripgrepLocator(options.ripgrep)),
    globTool(ctx),
    lsTool(ctx),
    ...processTools(ctx, processes, processOptions),
    webFetchTool(ctx, getter, positiveInt(options.fetchTimeoutMs, 'fetchTimeoutMs', 30_000, 600_000)),
    ...planTools(ctx, plansDir),
    ...(webSearch
      ? [webSearchTool(getter, webSearch, positiveInt(options.fetchTimeoutMs, 'fetchTimeoutMs', 30_000, 600_000))]
      : []),
  ];
  const functions = all.filter((f) => wanted.has(f.name));

  const stopAll = async () => {
    await Promise.all([processes.stopAll(), getter.close()]);
  };
  const disposeHook = client.onClose(stopAll);
  let registration: RegisterManualResult;
  try {
    registration = await client.registerFunctions(manualName, functions);
  } catch (error) {
    disposeHook();
    throw error;
  }
  if (!registration.success) {
    disposeHook();
    throw new UtcpError(
      'INVALID_MANUAL',
      `registerCodeTools: the manual ${manualName} could not be registered: ${registration.errors.join('; ')}`,
    );
  }
  return {
    manualName: registration.manualCallTemplate.name ?? manualName,
    toolNames: registration.manual.tools.map((t) => t.name),
    root: rootReal,
    sandbox: sandbox.mode,
    sandboxReason: sandbox.mode === 'none' ? sandbox.reason : undefined,
    registration,
    stopAll,
  };
}
