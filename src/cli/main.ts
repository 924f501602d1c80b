#!/usr/bin/env node
/**
 * The `utcp` command line: try, search, call and convert tools from a terminal.
 * Built on the public API only; this is the one place (with examples/) that prints.
 * Every command's options and its --help come from one table (`COMMANDS`), so help never drifts from the parser.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import {
  EXIT,
  SourceError,
  UsageError,
  callCommand,
  convertCommand,
  inspectCommand,
  searchCommand,
  toolsCommand,
  type Common,
} from './commands.js';
import { didYouMean } from '../internal.js';
import { createOut, formatError, printJsonError, type Out } from './output.js';

const SOURCES_HELP = `Sources: a UTCP manual or OpenAPI file (JSON/YAML), an http(s) URL to either, a config file,
or an MCP server as mcp:"<command> [args]" or mcp:<url>. utcp.config.json/.yaml in the current directory
(or --config) is loaded too, and is the only source when none is named. Variables come from the environment and ./.env.`;

interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** The value's placeholder in help, e.g. `<ms>`. */
  value?: string;
  help: string;
}

const OPT = {
  config: { type: 'string', short: 'c', value: '<file>', help: 'config file (default: ./utcp.config.json|yaml|yml)' },
  json: { type: 'boolean', help: 'machine-readable output on stdout (errors too, as {"error": {...}})' },
  timeout: { type: 'string', value: '<ms>', help: 'deadline for each discovery and call, in milliseconds' },
  baseUrl: {
    type: 'string',
    value: '<url>',
    help: 'base URL for the operations of OpenAPI files named here (overrides the servers of the spec)',
  },
  name: {
    type: 'string',
    value: '<name>',
    help: 'manual name for the single source named (default: from the file or URL)',
  },
  tag: { type: 'string', multiple: true, value: '<t>', help: 'only tools with this tag (repeatable)' },
} as const satisfies Record<string, OptionSpec>;

interface CommandSpec {
  usage: string;
  summary: string;
  options: Record<string, OptionSpec>;
  /** Extra lines at the end of the command's help (environment variables, examples). */
  notes?: string;
  /** Whether the command takes sources (and prints the sources paragraph in its help). */
  sources: boolean;
}

const SOURCE_OPTIONS = { config: OPT.config, timeout: OPT.timeout, 'base-url': OPT.baseUrl, name: OPT.name };

const COMMANDS: Record<string, CommandSpec> = {
  tools: {
    usage: 'utcp tools [sources...] [--tag t] [--json]',
    summary: 'List the tools of the given sources',
    options: { tag: OPT.tag, json: OPT.json, ...SOURCE_OPTIONS },
    sources: true,
  },
  search: {
    usage: 'utcp search <query> [sources...] [--limit n] [--tag t] [--json]',
    summary: 'Rank tools against a plain-language query',
    options: {
      limit: { type: 'string', short: 'n', value: '<n>', help: 'results to show (default 10, 0 = all)' },
      tag: { ...OPT.tag, help: 'only tools with one of these tags (repeatable)' },
      json: OPT.json,
      ...SOURCE_OPTIONS,
    },
    sources: true,
  },
  call: {
    usage: "utcp call <tool> [sources...] [--arg k=v ...] [--args '{...}'] [--stream] [--json]",
    summary: 'Call one tool and print its result',
    options: {
      arg: {
        type: 'string',
        short: 'a',
        multiple: true,
        value: 'k=v',
        help: 'an argument (repeatable); k.sub=v builds nested objects; values are JSON unless the schema says string',
      },
      args: {
        type: 'string',
        value: "'{...}'",
        help: 'all arguments as one JSON object (--arg values are merged on top)',
      },
      stream: { type: 'boolean', help: 'print each streamed item on its own line as it arrives' },
      json: { ...OPT.json, help: 'print the result as JSON (errors as {"error": {...}})' },
      ...SOURCE_OPTIONS,
    },
    notes: 'The tool may be named without its manual prefix when that is unambiguous (greet for greet.greet).',
    sources: true,
  },
  convert: {
    usage: 'utcp convert <openapi-file-or-url> [-o manual.json] [--name n] [--base-url u] [--json]',
    summary: 'Convert an OpenAPI spec into a UTCP manual and print the conversion report',
    options: {
      output: { type: 'string', short: 'o', value: '<file>', help: 'write the manual to a file (default: stdout)' },
      name: {
        type: 'string',
        value: '<name>',
        help: 'manual name carried by the generated templates (default "openapi")',
      },
      'base-url': {
        type: 'string',
        value: '<url>',
        help: "base URL for the operations (overrides the spec's servers)",
      },
      timeout: { type: 'string', value: '<ms>', help: 'deadline for downloading a spec URL, in milliseconds' },
      json: { ...OPT.json, help: 'with -o: print {output, tools, report} as JSON; errors as {"error": {...}}' },
    },
    sources: false,
  },
  inspect: {
    usage: 'utcp inspect [sources...] [--json]',
    summary: 'Validate sources and list their tools, warnings and required variables',
    options: { json: OPT.json, ...SOURCE_OPTIONS },
    notes: 'Exits 1 when a required variable is missing, 3 when a source fails to load.',
    sources: true,
  },
  chat: {
    usage: 'utcp chat [sources...] [--prompt "..."] [--provider p] [--model m] [--stream] [--max-steps n] [--yes]',
    summary: 'Chat with an LLM that can call the tools',
    options: {
      prompt: { type: 'string', short: 'p', value: '"..."', help: 'one question, then exit' },
      model: {
        type: 'string',
        short: 'm',
        value: '<model>',
        help: 'model name (default: $OPENAI_MODEL, $ANTHROPIC_MODEL, $GEMINI_MODEL, or the provider default)',
      },
      provider: {
        type: 'string',
        value: '<p>',
        help: 'openai (Chat Completions), responses (OpenAI Responses API), anthropic or gemini (default: $UTCP_CHAT_PROVIDER, else by the variables set)',
      },
      stream: { type: 'boolean', help: 'print the answer as it arrives' },
      'max-steps': {
        type: 'string',
        value: '<n>',
        help: 'model turns per question before it must answer (default 16)',
      },
      yes: { type: 'boolean', short: 'y', help: 'approve every tool call without asking' },
      ...SOURCE_OPTIONS,
    },
    notes: `Model endpoint from the environment (--provider or UTCP_CHAT_PROVIDER picks one; otherwise the first
provider whose variables are set, in this order):
  openai, responses  OPENAI_BASE_URL  any OpenAI-compatible server (default https://api.openai.com/v1;
                                      Ollama: http://127.0.0.1:11434/v1)
                     OPENAI_API_KEY   its key (not needed for local servers)
                     OPENAI_MODEL     model name (default gpt-4o-mini)
                     responses is never picked by itself: --provider responses
  anthropic          ANTHROPIC_API_KEY, ANTHROPIC_MODEL (default claude-sonnet-4-5), ANTHROPIC_BASE_URL
  gemini             GEMINI_API_KEY (or GOOGLE_API_KEY), GEMINI_MODEL (default gemini-2.5-flash), GEMINI_BASE_URL
Base URLs must be https://, or http:// to a loopback address.
Reads run freely; other calls ask y/n/edit on a terminal, or need --yes. Ctrl-C stops at any point (a model
request, a tool call, an approval prompt) and exits 130; a second Ctrl-C exits at once.`,
    sources: true,
  },
  'serve-mcp': {
    usage:
      'utcp serve-mcp [sources...] [--code-tools <dir> [--dangerously-run-unsandboxed]] [--code-mode] [--http [--port p] [--no-auth] [--stateless | --max-sessions n --session-idle ms]]',
    summary: 'Expose the tools as an MCP server (stdio by default)',
    options: {
      http: { type: 'boolean', help: 'serve streamable HTTP on 127.0.0.1 instead of stdio (bearer token required)' },
      port: { type: 'string', value: '<p>', help: 'HTTP port (default 0 = any free port)' },
      'no-auth': {
        type: 'boolean',
        help: 'HTTP: accept requests without a token (any local process or user can call the tools)',
      },
      stateless: {
        type: 'boolean',
        help: 'HTTP: keep no session between requests, so many instances behind a load balancer serve one host',
      },
      'max-sessions': {
        type: 'string',
        value: '<n>',
        help: 'HTTP: live sessions at most; past it the least recently used idle one is closed (default 50)',
      },
      'session-idle': {
        type: 'string',
        value: '<ms>',
        help: 'HTTP: close a session idle this long, in milliseconds (default 600000 = 10 minutes)',
      },
      'code-tools': {
        type: 'string',
        value: '<dir>',
        help: 'also serve the utcp-kit/tools coding toolset (code.read, code.edit, code.bash, ...) on this workspace',
      },
      'code-mode': {
        type: 'boolean',
        help: 'also serve code_mode.run (a script calling the other tools, in a QuickJS sandbox) and code_mode.describe; needs quickjs-emscripten-core and @jitl/quickjs-wasmfile-release-sync',
      },
      'dangerously-run-unsandboxed': {
        type: 'boolean',
        help: 'with --code-tools where bubblewrap does not work: let code.bash run commands with all your rights (your files, the secrets of your processes, the network)',
      },
      ...SOURCE_OPTIONS,
    },
    notes: `In stdio mode stdout carries the MCP protocol; messages go to stderr.
Over HTTP every request must send "Authorization: Bearer <token>": the token is UTCP_MCP_TOKEN when set
(16 to 1024 visible ASCII characters), otherwise a new one is generated and printed once to stderr.`,
    sources: true,
  },
};

/** The option table of one command in `parseArgs` form, plus -h/--help. */
export function parserOptions(command: string): ParseArgsConfig['options'] {
  const options: NonNullable<ParseArgsConfig['options']> = { help: { type: 'boolean', short: 'h' } };
  for (const [name, o] of Object.entries(COMMANDS[command].options)) {
    options[name] = { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) };
  }
  return options;
}

/**
 * parseArgs with our own words for an unknown option (Node's message leaves a quote open): the option, the
 * closest known one, and how to pass a value that starts with "-".
 */
function parseCommandArgs(command: string, args: string[]) {
  const options = parserOptions(command);
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    const unknown = /^Unknown option '([^']+)'/.exec((error as Error).message)?.[1];
    if ((error as { code?: string }).code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || !unknown) throw error;
    const bare = unknown.replace(/^-+/, '').split('=')[0];
    const near = didYouMean(
      bare,
      Object.keys(options ?? {}).filter((name) => name.length > 1),
    ).replace(/"([^"]+)"/, '--$1');
    throw new UsageError(
      `Unknown option ${unknown}${near}; a value that starts with "-" goes after "--": utcp ${command} -- ${unknown}`,
    );
  }
}

/** Command names, for tests and completion. */
export const COMMAND_NAMES = Object.keys(COMMANDS);

function mainHelp(): string {
  const rows = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return `utcp: try, search, call and convert UTCP tools

Usage: utcp <command> [options]        (without installing: npx utcp-kit <command> ...)

Commands:
${rows.join('\n')}

${SOURCES_HELP}

Exit codes: 0 ok · 1 a call failed (or variables are missing) · 2 usage error · 3 a source failed to load

Run utcp <command> --help for the options of a command; utcp --version prints the version.`;
}

export function commandHelp(name: string): string {
  const c = COMMANDS[name];
  const rows = Object.entries(c.options).map(([opt, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : ''}--${opt}${o.value ? ` ${o.value}` : ''}`;
    return `  ${flag.padEnd(22)} ${o.help}`;
  });
  rows.push(`  ${'-h, --help'.padEnd(22)} this help`);
  return [
    `${c.summary}`,
    '',
    `Usage: ${c.usage}`,
    '',
    'Options:',
    ...rows,
    ...(c.notes ? ['', c.notes] : []),
    ...(c.sources ? ['', SOURCES_HELP] : []),
  ].join('\n');
}

function intOption(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} expects a non-negative integer, got "${value}"`);
  return n;
}

function exitCodeFor(error: unknown): number {
  if (error instanceof UsageError || (error as { code?: string })?.code?.startsWith?.('ERR_PARSE_ARGS'))
    return EXIT.USAGE;
  if (error instanceof SourceError) return EXIT.SOURCE;
  return EXIT.FAILED;
}

function reportFailure(out: Out, command: string | undefined, error: unknown): number {
  const code = exitCodeFor(error);
  if (out.json) printJsonError(out, error, code);
  out.info(
    formatError(out, error) +
      (code === EXIT.USAGE ? `\nRun utcp ${command ? `${command} ` : ''}--help for usage.` : ''),
  );
  return code;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(mainHelp() + '\n');
    return command ? EXIT.OK : EXIT.USAGE;
  }
  if (command === '--version' || command === '-v') {
    const { createRequire } = await import('node:module');
    process.stdout.write(createRequire(import.meta.url)('../../package.json').version + '\n');
    return EXIT.OK;
  }
  const spec = COMMANDS[command];
  const out = createOut(Boolean(spec?.options.json) && rest.includes('--json'));
  if (!spec) {
    const near = COMMAND_NAMES.find((n) => n.startsWith(command.slice(0, 2)));
    return reportFailure(
      out,
      undefined,
      new UsageError(`Unknown command "${command}"${near ? ` (did you mean "${near}"?)` : ''}`),
    );
  }
  try {
    const parsed = parseCommandArgs(command, rest);
    const values = parsed.values as Record<string, unknown>;
    const positionals = parsed.positionals;
    if (values.help) {
      process.stdout.write(commandHelp(command) + '\n');
      return EXIT.OK;
    }
    const common = (sources: string[]): Common => ({
      out,
      cwd: process.cwd(),
      sources,
      config: values.config as string | undefined,
      timeoutMs: intOption(values.timeout, 'timeout'),
      baseUrl: values['base-url'] as string | undefined,
      name: values.name as string | undefined,
    });
    const need = (what: string) => {
      if (positionals.length === 0) throw new UsageError(`${command} needs ${what}\nUsage: ${spec.usage}`);
      return positionals[0];
    };
    switch (command) {
      case 'tools':
        return await toolsCommand(common(positionals), { tag: values.tag as string[] | undefined });
      case 'search': {
        const query = need('a query');
        return await searchCommand(common(positionals.slice(1)), query, {
          limit: intOption(values.limit, 'limit') ?? 10,
          tag: values.tag as string[] | undefined,
        });
      }
      case 'call': {
        const tool = need('a tool name');
        const sources = positionals.slice(1);
        const stray = sources.find((s) => /^\s*[{[]/.test(s));
        if (stray) {
          const shown = stray.trim().length > 40 ? `${stray.trim().slice(0, 39)}…` : stray.trim();
          throw new UsageError(
            `${shown} looks like JSON arguments: pass them with --args '${shown}' (--json selects JSON output)`,
          );
        }
        return await callCommand(common(sources), tool, {
          arg: values.arg as string[] | undefined,
          args: values.args as string | undefined,
          stream: values.stream as boolean | undefined,
        });
      }
      case 'convert': {
        const input = need('an OpenAPI file or URL');
        if (positionals.length > 1)
          throw new UsageError(`convert takes one spec, got ${positionals.length}: ${positionals.join(' ')}`);
        return await convertCommand(common([]), input, {
          output: values.output as string | undefined,
          name: values.name as string | undefined,
          baseUrl: values['base-url'] as string | undefined,
        });
      }
      case 'inspect':
        return await inspectCommand(common(positionals));
      case 'chat': {
        const { chatCommand } = await import('./chat.js');
        return await chatCommand(common(positionals), {
          prompt: values.prompt as string | undefined,
          model: values.model as string | undefined,
          provider: values.provider as string | undefined,
          stream: Boolean(values.stream),
          yes: Boolean(values.yes),
          maxSteps: intOption(values['max-steps'], 'max-steps'),
        });
      }
      case 'serve-mcp': {
        const { serveMcpCommand } = await import('./serve-mcp-command.js');
        return await serveMcpCommand(common(positionals), {
          http: Boolean(values.http),
          port: intOption(values.port, 'port') ?? 0,
          codeTools: values['code-tools'] as string | undefined,
          codeMode: Boolean(values['code-mode']),
          noAuth: Boolean(values['no-auth']),
          stateless: Boolean(values.stateless),
          maxSessions: intOption(values['max-sessions'], 'max-sessions'),
          sessionIdleTimeoutMs: intOption(values['session-idle'], 'session-idle'),
          unsandboxed: Boolean(values['dangerously-run-unsandboxed']),
        });
      }
    }
    return EXIT.USAGE;
  } catch (error) {
    return reportFailure(out, command, error);
  }
}

/**
 * A reader that stops early (`utcp tools | head -1`) closes the pipe: that is success, not a crash.
 * Any later write would fail the same way, so the process ends at once with 0.
 */
function exitQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
    process.exit(stream === process.stdout ? 0 : Number(process.exitCode ?? 0));
  });
}

const isEntry =
  process.argv[1] &&
  import.meta.url ===
    (await import('node:url')).pathToFileURL((await import('node:fs')).realpathSync(process.argv[1])).href;
if (isEntry) {
  exitQuietlyOnClosedPipe(process.stdout);
  exitQuietlyOnClosedPipe(process.stderr);
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error) => {
      process.stderr.write(`${String(error?.stack ?? error)}\n`);
      process.exitCode = EXIT.FAILED;
    },
  );
}
