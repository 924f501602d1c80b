import { type AbortSource, callScope, type Deadline, scopeController, withTimeout } from '../../core/deadline.js';
import { mkdtemp, rm, stat, chmod, writeFile } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CliExitError, TransportError, UtcpArgumentsError, UtcpError } from '../../core/errors.js';
import { argToText } from '../../core/stringify.js';
import type { CallOptions, DiscoveryResult, Transport, TransportContext } from '../../core/transport.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { CliCallTemplate } from './template.js';
import { buildBashScript, buildPowerShellScript, markEnvName, outDirEnvName } from './build-script.js';
import { StepOutputs } from './step-outputs.js';
import { buildChildEnv } from '../../process/child-env.js';
import { parseCallOutput, parseDiscoveryOutput } from './parse-output.js';
import { processTreeMarker, type ProcessGroup } from '../../process/process-group.js';
import { clientPidNamespace } from '../../process/pid-namespace.js';
import { RandomTokens } from '../../process/random-tokens.js';
import {
  argEnvName,
  type PlaceholderPlan,
  planPlaceholders,
  renderPlan,
  varEnvName,
  type ShellDialect,
} from './rewrite-placeholders.js';
import { deferredVariables } from '../../core/variables.js';
import { runProcess, type RunProcessOptions } from './run-process.js';
import { checkBashContexts, checkPowerShellContexts, type ContextReport } from './shell-contexts.js';

/** Call timeout when the template sets none, in milliseconds. */
export const DEFAULT_CALL_TIMEOUT_MS = 120_000;
/** Discovery timeout, in milliseconds. */
export const DISCOVERY_TIMEOUT_MS = 60_000;
const OUTPUT_TAIL_BYTES = 4096;
/** The only values allowed where the shell evaluates text as arithmetic or as a name. */
const INTEGER_LITERAL = /^[+-]?[0-9]{1,19}$/;
/** Distinct command lists whose reading one transport keeps (the oldest goes first). */
export const PLAN_CACHE_SIZE = 256;
/**
 * A command list longer than this (characters, all steps) is read on every call and not kept, so the cache holds at
 * most 256 × 64 Ki characters of commands and their pieces whatever the manuals hold.
 */
export const PLAN_CACHE_MAX_CHARS = 64 * 1024;

/**
 * What a call needs from its template's commands, read once per distinct list of command texts
 * (docs/design/transports.md#cli-fast-path): the placeholders of each step and where their values land.
 */
interface CommandsPlan {
  readonly steps: readonly PlaceholderPlan[];
  /** Argument names, de-duplicated over all steps, in first-seen order. */
  readonly names: readonly string[];
  readonly variables: readonly string[];
  readonly contexts: ContextReport;
}

export interface CliTransportOptions {
  /** Selects bash or PowerShell. @default process.platform */
  platform?: NodeJS.Platform;
  /** Where inherited variables are read from. @default process.env */
  hostEnv?: NodeJS.ProcessEnv;
}

interface Execution {
  /** The caller's signal, or the client's per-call deadline followed without building a signal (`callScope`). */
  scope: AbortSource;
  callerTimeoutMs?: number;
  ownTimeoutMs: number;
  what: string;
  /** The tool name, for argument errors. */
  tool?: string;
  maxBytes: number;
  discovery: boolean;
}

/** Runs `cli` call templates: every step in one bash (or PowerShell) process, arguments passed only through the environment. */
export class CliTransport implements Transport<CliCallTemplate> {
  readonly type = 'cli';
  readonly #ctx: TransportContext;
  readonly #platform: NodeJS.Platform;
  readonly #hostEnv: NodeJS.ProcessEnv;
  readonly #closing = scopeController();
  readonly #running = new Set<Promise<unknown>>();
  readonly #lingering = new Set<ProcessGroup>();
  /** Aborts one running call's deadline; close() calls every one. */
  readonly #aborts = new Set<() => void>();
  readonly #plans = new Map<string, CommandsPlan>();
  readonly #tokens = new RandomTokens();

  constructor(ctx: TransportContext, options: CliTransportOptions = {}) {
    this.#ctx = ctx;
    this.#platform = options.platform ?? process.platform;
    this.#hostEnv = options.hostEnv ?? process.env;
  }

  async registerManual(template: CliCallTemplate, options: CallOptions): Promise<DiscoveryResult> {
    const what = `cli discovery for manual ${options.manualName}`;
    const output = await this.#track(
      this.#execute(
        template,
        {},
        {
          scope: options.signal,
          callerTimeoutMs: options.timeoutMs,
          ownTimeoutMs: DISCOVERY_TIMEOUT_MS,
          what,
          maxBytes: this.#ctx.limits.max_document_bytes,
          discovery: true,
        },
      ),
    );
    return { manual: parseDiscoveryOutput(output, what) };
  }

  async callTool(tool: Tool, args: JsonObject, template: CliCallTemplate, options: CallOptions): Promise<unknown> {
    const output = await this.#track(
      this.#execute(template, args, {
        scope: callScope(options),
        callerTimeoutMs: options.timeoutMs,
        ownTimeoutMs: callTimeout(template),
        what: `cli call ${tool.name}`,
        tool: tool.name,
        maxBytes: this.#ctx.limits.max_response_bytes,
        discovery: false,
      }),
    );
    return parseCallOutput(output);
  }

  /** One item: the result of `callTool`. */
  async *callToolStream(
    tool: Tool,
    args: JsonObject,
    template: CliCallTemplate,
    options: CallOptions,
  ): AsyncIterable<unknown> {
    yield await this.callTool(tool, args, template, options);
  }

  async deregisterManual(): Promise<void> {
    // Nothing is kept per manual: every call is its own process.
  }

  /** Kills running calls and background processes left by finished ones, then waits for the shells to exit. */
  async close(): Promise<void> {
    if (!this.#closing.signal.aborted) {
      this.#closing.abort(new UtcpError('CLIENT_CLOSED', 'cli transport was closed'));
    }
    for (const abort of [...this.#aborts]) abort();
    for (const group of this.#lingering) group.terminate();
    this.#lingering.clear();
    await Promise.allSettled([...this.#running]);
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#running.add(work);
    const forget = () => this.#running.delete(work);
    work.then(forget, forget);
    return work;
  }

  async #execute(template: CliCallTemplate, args: JsonObject, run: Execution): Promise<string> {
    if (this.#closing.signal.aborted) throw new UtcpError('CLIENT_CLOSED', `${run.what}: the cli transport is closed`);
    const commands = checkCommands(template);
    const dialect: ShellDialect = this.#platform === 'win32' ? 'powershell' : 'bash';
    const plan = this.#plan(commands, dialect);
    const nonce = this.#tokens.hex(8);
    const texts = plan.steps.map((step) => renderPlan(step, nonce));
    const internal: Record<string, string> = {};
    for (const name of plan.names) {
      const text = argumentText(args, name, run);
      const construct = plan.contexts.integers.get(name);
      if (construct !== undefined && !INTEGER_LITERAL.test(text)) {
        throw new UtcpArgumentsError(run.tool ?? run.what, [
          {
            path: name,
            message: `must be an integer literal (digits, optional sign): the command evaluates it in ${construct}`,
          },
        ]);
      }
      internal[argEnvName(nonce, name)] = text;
    }
    // Config variables in the command text travel like arguments: through the environment, never in the script.
    const variables = plan.variables.length > 0 ? deferredVariables(template) : undefined;
    for (const name of plan.variables) {
      const value = variables?.get(name);
      if (value === undefined) throw new UtcpError('INVALID_MANUAL', `${run.what}: no value for variable \${${name}}`);
      if (value.includes('\0'))
        throw new UtcpError('INVALID_MANUAL', `${run.what}: variable ${name} contains a NUL character`);
      internal[varEnvName(nonce, name)] = value;
    }
    const marker = processTreeMarker(this.#tokens);
    internal[marker.name] = marker.value;
    const appended = commands.map((step, i) => step.append_to_final_output ?? i === commands.length - 1);
    const cwd = await this.#workingDir(template, run.what);
    this.#pruneLingering();
    // Bash calls run in a PID namespace of their own where the machine allows (docs/design/threat-model.md#process-trees).
    const pidNamespace = dialect === 'bash' ? await clientPidNamespace(this.#ctx) : undefined;

    const signal = this.#callScope(run);
    try {
      if (dialect === 'powershell') {
        const env = this.#env(template, internal);
        const script = buildPowerShellScript(texts, appended);
        const result = await this.#spawn(
          'powershell.exe',
          ['-NoProfile', '-NonInteractive', '-Command', script],
          cwd,
          env,
          signal.source,
          run,
          run.maxBytes,
          marker.value,
        );
        const output = result.stdout.toString('utf8');
        if (result.exitCode !== 0) {
          throw new CliExitError(result.exitCode, result.signal, tail(output + result.stderrTail), run.what);
        }
        return output;
      }
      // Only a step that another step follows has its output read back (CMD_<i>_OUTPUT): a one-step call needs no
      // directory and no acknowledgement pipe (docs/design/transports.md#cli-fast-path).
      const outDir = commands.length > 1 ? await mkdtemp(join(tmpdir(), 'utcp-cli-')) : undefined;
      try {
        if (outDir !== undefined) {
          await chmod(outDir, 0o700);
          internal[outDirEnvName(nonce)] = outDir;
        }
        const stepToken = this.#tokens.hex(16);
        internal[markEnvName(nonce)] = stepToken;
        const env = this.#env(template, internal);
        // The shell itself is the namespace's init where the wrapper allows: no /bin/sh between (about 3 ms per
        // call; docs/design/transports.md#cli-fast-path).
        const asInit = pidNamespace?.commandCanBeInit === true;
        const script = buildBashScript(texts, nonce, asInit);
        this.#ctx.logger.debug?.('cli: running', { what: run.what, steps: commands.length, cwd });
        // Step outputs stream through the shell's stdout, capped while they arrive; the transport writes each
        // step's file for CMD_<i>_OUTPUT and then lets the shell go on (build-script.ts).
        let stdin: Writable | undefined;
        const steps = new StepOutputs(stepToken, async (index, output) => {
          if (outDir === undefined || index >= commands.length - 1) return;
          try {
            await writeFile(join(outDir, String(index)), output, { mode: 0o600 });
            stdin?.write('\n');
          } catch {
            stdin?.destroy(); // the shell's `read` fails and it exits with 125
          }
        });
        const result = await this.#spawn(
          '/bin/bash',
          ['-c', script],
          cwd,
          env,
          signal.source,
          run,
          run.maxBytes,
          marker.value,
          {
            pidNamespace,
            commandAsInit: asInit,
            onStdout: (chunk) => steps.push(chunk),
            ...(outDir !== undefined ? { onControl: (s: Writable) => (stdin = s) } : {}),
            isComplete: () => steps.ended,
          },
        );
        steps.end();
        if (result.exitCode !== 0) {
          // The step that ran last: the current one if it ended the shell, else the last step.
          const stepTail = tail(steps.output(Math.min(steps.current, commands.length - 1)).toString('utf8'));
          const shellTail = result.stderrTail.trim();
          throw new CliExitError(
            result.exitCode,
            result.signal,
            tail(shellTail ? `${stepTail}\n${shellTail}` : stepTail),
            run.what,
          );
        }
        if (steps.unexpectedLabel !== undefined) {
          throw new TransportError(
            `${run.what}: its output held a step marker for step "${steps.unexpectedLabel}" out of order, so the step outputs cannot be told apart`,
          );
        }
        // A step that called `exit 0` ended the shell: the steps after it never ran, so they add nothing, and when
        // no step asked for in the result ran there is no result to return (none is made up).
        const ran = appended.map((on, i) => on && i <= steps.current);
        if (appended.some(Boolean) && !ran.some(Boolean)) {
          const wanted = appended.indexOf(true) + 1;
          throw new TransportError(
            `${run.what}: step ${steps.current + 1} of ${commands.length} ended the shell with status 0 before step ${wanted} ran, so there is no output of step ${wanted} to return`,
          );
        }
        return ran.flatMap((on, i) => (on ? [steps.output(i).toString('utf8').replace(/\n+$/, '')] : [])).join('\n');
      } finally {
        if (outDir !== undefined) await rm(outDir, { recursive: true, force: true });
      }
    } finally {
      signal.dispose();
    }
  }

  #spawn(
    file: string,
    args: string[],
    cwd: string,
    env: Record<string, string>,
    signal: AbortSource,
    run: Execution,
    maxStdoutBytes: number,
    treeMarker: string,
    streaming: Pick<RunProcessOptions, 'onStdout' | 'onControl' | 'isComplete' | 'pidNamespace' | 'commandAsInit'> = {},
  ) {
    return runProcess({
      ...streaming,
      file,
      args,
      cwd,
      env,
      signal,
      what: run.what,
      timeoutMs: run.callerTimeoutMs,
      maxStdoutBytes,
      platform: this.#platform,
      treeMarker,
      onLingering: (group) => {
        this.#ctx.logger.debug?.('cli: background processes outlived the call; they are killed on close()', {
          what: run.what,
        });
        this.#lingering.add(group);
      },
    });
  }

  /**
   * The reading of `commands` (placeholders, evaluating contexts), kept per distinct list of texts: a template's
   * commands are read once, not on every call. A command that cannot be run safely throws each time it is asked
   * for, and is not kept.
   */
  #plan(commands: readonly { command: string }[], dialect: ShellDialect): CommandsPlan {
    // A command holds no NUL (checkCommands), so NUL joins the texts into a key no other list makes.
    const key = commands.length === 1 ? commands[0].command : commands.map((step) => step.command).join('\0');
    let plan = this.#plans.get(key);
    if (plan !== undefined) return plan;
    const steps = commands.map((step) => planPlaceholders(step.command, dialect));
    // Where each value would land, read from the template before anything runs (docs/design/threat-model.md#cli-evaluating-contexts).
    const texts = commands.map((step) => step.command);
    const contexts = dialect === 'bash' ? checkBashContexts(texts) : checkPowerShellContexts(texts);
    plan = {
      steps,
      names: [...new Set(steps.flatMap((step) => step.names))],
      variables: [...new Set(steps.flatMap((step) => step.variables))],
      contexts,
    };
    if (key.length > PLAN_CACHE_MAX_CHARS) return plan;
    if (this.#plans.size >= PLAN_CACHE_SIZE) this.#plans.delete(this.#plans.keys().next().value!);
    this.#plans.set(key, plan);
    return plan;
  }

  #env(template: CliCallTemplate, internal: Record<string, string>): Record<string, string> {
    return buildChildEnv({
      hostEnv: this.#hostEnv,
      inherit: template.inherit_env_vars,
      envVars: template.env_vars,
      internal,
      platform: this.#platform,
    });
  }

  async #workingDir(template: CliCallTemplate, what: string): Promise<string> {
    const dir = template.working_dir;
    if (dir === null || dir === undefined) return this.#ctx.rootDir;
    if (typeof dir !== 'string' || dir === '')
      throw new UtcpError('INVALID_MANUAL', `${what}: working_dir must be a non-empty string or null`);
    const full = resolve(this.#ctx.rootDir, dir);
    let isDir = false;
    try {
      isDir = (await stat(full)).isDirectory();
    } catch (cause) {
      throw new TransportError(`${what}: working_dir ${JSON.stringify(dir)} does not exist`, { cause });
    }
    if (!isDir) throw new TransportError(`${what}: working_dir ${JSON.stringify(dir)} is not a directory`);
    return full;
  }

  /**
   * The call's deadline: the template's timeout on top of the caller's scope, which close() of this transport aborts
   * too. On the client's per-call deadline the timer is armed on that deadline itself (`withTimeout`), so a call builds
   * no second controller and no `AbortSignal` (docs/design/transports.md#cli-fast-path). `dispose()` stops the timer.
   */
  #callScope(run: Execution): { source: Deadline; dispose(): void } {
    const scope = withTimeout(run.scope, run.ownTimeoutMs, run.what);
    // withTimeout's source is a deadline: the caller's own when armed on it, else the new one linked to the caller.
    const source = scope.source as Deadline;
    const abort = () => source.abort(new UtcpError('CLIENT_CLOSED', 'cli transport was closed'));
    this.#aborts.add(abort);
    // close() may have come while the call was being prepared (it awaits before this): then nothing is started.
    if (this.#closing.signal.aborted) abort();
    return {
      source,
      dispose: () => {
        this.#aborts.delete(abort);
        scope.dispose();
      },
    };
  }

  #pruneLingering(): void {
    for (const group of this.#lingering) if (!group.isAlive()) this.#lingering.delete(group);
  }
}

function checkCommands(template: CliCallTemplate): { command: string; append_to_final_output?: boolean | null }[] {
  const commands = template.commands;
  if (!Array.isArray(commands) || commands.length === 0) {
    throw new UtcpError('INVALID_MANUAL', 'cli: commands must be a non-empty array');
  }
  commands.forEach((step, i) => {
    if (typeof step !== 'object' || step === null || typeof step.command !== 'string' || step.command === '') {
      throw new UtcpError('INVALID_MANUAL', `cli: commands[${i}].command must be a non-empty string`);
    }
    const append = step.append_to_final_output;
    if (append !== undefined && append !== null && typeof append !== 'boolean') {
      throw new UtcpError('INVALID_MANUAL', `cli: commands[${i}].append_to_final_output must be a boolean or null`);
    }
    if (step.command.includes('\0'))
      throw new UtcpError('INVALID_MANUAL', `cli: commands[${i}].command contains a NUL character`);
  });
  return commands;
}

function callTimeout(template: CliCallTemplate): number {
  const t = template.timeout;
  if (t === undefined || t === null) return DEFAULT_CALL_TIMEOUT_MS;
  if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0) {
    throw new UtcpError('INVALID_MANUAL', 'cli: timeout must be a positive number of milliseconds');
  }
  return t;
}

function argumentText(args: JsonObject, name: string, run: Execution): string {
  const placeholder = `UTCP_ARG_${name}_UTCP_END`;
  if (run.discovery) {
    throw new UtcpError(
      'INVALID_MANUAL',
      `${run.what}: discovery commands cannot use argument placeholders (${placeholder})`,
    );
  }
  const text = Object.hasOwn(args, name) ? argToText(args[name]) : undefined;
  if (text === undefined) {
    throw new UtcpError('INVALID_ARGUMENTS', `${run.what}: missing argument "${name}" for placeholder ${placeholder}`);
  }
  if (text.includes('\0'))
    throw new UtcpError('INVALID_ARGUMENTS', `${run.what}: argument "${name}" contains a NUL character`);
  return text;
}

function tail(text: string): string {
  return text.length > OUTPUT_TAIL_BYTES ? text.slice(-OUTPUT_TAIL_BYTES) : text;
}
