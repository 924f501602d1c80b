#!/usr/bin/env node
/**
 * The `utcp` command line: try, search, call and convert tools from a terminal.
 * Built on the public API only; this is the one place (with examples/) that prints.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { EXIT, UsageError, callCommand, convertCommand, inspectCommand, searchCommand, toolsCommand, type Common } from './commands.js';
import { createOut, formatError } from './output.js';

const SOURCES_HELP = `Sources: a UTCP manual or OpenAPI file (JSON/YAML), an http(s) URL to either, a config file,
or an MCP server as mcp:"<command> [args]" or mcp:<url>. utcp.config.json/.yaml in the current directory
(or --config) is loaded too, and is the only source when none is named. Variables come from the environment and ./.env.`;

const COMMON_OPTIONS = {
  config: { type: 'string', short: 'c' },
  json: { type: 'boolean' },
  timeout: { type: 'string' },
  'base-url': { type: 'string' },
  name: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

interface CommandSpec {
  usage: string;
  summary: string;
  help: string;
  options: ParseArgsConfig['options'];
}

const COMMANDS: Record<string, CommandSpec> = {
  tools: {
    usage: 'utcp tools [sources...] [--tag t] [--json]',
    summary: 'List the tools of the given sources',
    help: '  --tag <t>          only tools with this tag (repeatable)',
    options: { ...COMMON_OPTIONS, tag: { type: 'string', multiple: true } },
  },
  search: {
    usage: 'utcp search <query> [sources...] [--limit n] [--tag t] [--json]',
    summary: 'Rank tools against a plain-language query',
    help: '  --limit <n>        results to show (default 10, 0 = all)\n  --tag <t>          only tools with one of these tags (repeatable)',
    options: { ...COMMON_OPTIONS, limit: { type: 'string', short: 'n' }, tag: { type: 'string', multiple: true } },
  },
  call: {
    usage: "utcp call <tool> [sources...] [--arg k=v ...] [--json '{...}'] [--stream]",
    summary: 'Call one tool and print its result',
    help: "  --arg k=v          an argument (repeatable); JSON values are parsed unless the schema says string\n  --json '{...}'     all arguments as one JSON object\n  --stream           print each streamed item on its own line",
    options: { ...COMMON_OPTIONS, json: { type: 'string' }, arg: { type: 'string', short: 'a', multiple: true }, stream: { type: 'boolean' } },
  },
  convert: {
    usage: 'utcp convert <openapi-file-or-url> [-o manual.json] [--name n] [--base-url u]',
    summary: 'Convert an OpenAPI spec into a UTCP manual and print the conversion report',
    help: '  -o, --output <f>   write the manual to a file (default: stdout)\n  --name <n>         manual name carried by the generated templates (default "openapi")\n  --base-url <u>     base URL for the operations (overrides the spec\'s servers)',
    options: { ...COMMON_OPTIONS, output: { type: 'string', short: 'o' } },
  },
  inspect: {
    usage: 'utcp inspect [sources...] [--json]',
    summary: 'Validate sources and list their tools, warnings and required variables',
    help: '',
    options: COMMON_OPTIONS,
  },
  chat: {
    usage: 'utcp chat [sources...] [--prompt "..."] [--model m] [--yes]',
    summary: 'Chat with an LLM that can call the tools (OpenAI-compatible endpoint from the environment)',
    help: '  env: OPENAI_BASE_URL (default https://api.openai.com/v1), OPENAI_API_KEY, OPENAI_MODEL\n  --prompt "..."     one question, then exit\n  --yes              approve every tool call without asking',
    options: { ...COMMON_OPTIONS, prompt: { type: 'string', short: 'p' }, model: { type: 'string', short: 'm' }, yes: { type: 'boolean', short: 'y' }, 'max-steps': { type: 'string' } },
  },
  'serve-mcp': {
    usage: 'utcp serve-mcp [sources...] [--http [--port p]]',
    summary: 'Expose the tools as an MCP server (stdio by default)',
    help: '  --http             serve streamable HTTP on 127.0.0.1 instead of stdio\n  --port <p>         HTTP port (default 0 = any free port)',
    options: { ...COMMON_OPTIONS, http: { type: 'boolean' }, port: { type: 'string' } },
  },
};

function mainHelp(): string {
  const rows = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
  return `utcp: try, search, call and convert UTCP tools

Usage: utcp <command> [options]

Commands:
${rows.join('\n')}

${SOURCES_HELP}

Common options: --config <file>, --json (machine-readable output), --timeout <ms>, -h/--help
Exit codes: 0 ok · 1 a call failed (or variables are missing) · 2 usage error · 3 a source failed to load

Run utcp <command> --help for details.`;
}

function commandHelp(name: string): string {
  const c = COMMANDS[name];
  // `call` takes its arguments with --json, so it has no machine-readable output switch.
  const json = name === 'call' ? '' : '  --json             machine-readable output\n';
  return `${c.summary}\n\nUsage: ${c.usage}\n\n${c.help ? c.help + '\n' : ''}  -c, --config <f>   config file (default: ./utcp.config.json|yaml)\n  --timeout <ms>     deadline per call\n${json}\n${SOURCES_HELP}`;
}

function intOption(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} expects a non-negative integer, got "${value}"`);
  return n;
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
  const wantsJson = rest.includes('--json') && command !== 'call';
  const out = createOut(wantsJson);
  if (!spec) {
    out.info(formatError(out, new Error(`Unknown command "${command}"`)) + `\nRun utcp --help for the list of commands.`);
    return EXIT.USAGE;
  }
  try {
    const parsed = parseArgs({ args: rest, options: spec.options, allowPositionals: true, strict: true });
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
        return await searchCommand(common(positionals.slice(1)), query, { limit: intOption(values.limit, 'limit') ?? 10, tag: values.tag as string[] | undefined });
      }
      case 'call': {
        const tool = need('a tool name');
        return await callCommand(common(positionals.slice(1)), tool, { arg: values.arg as string[] | undefined, json: values.json as string | undefined, stream: values.stream as boolean | undefined });
      }
      case 'convert': {
        const input = need('an OpenAPI file or URL');
        return await convertCommand(common([]), input, { output: values.output as string | undefined, name: values.name as string | undefined, baseUrl: values['base-url'] as string | undefined });
      }
      case 'inspect':
        return await inspectCommand(common(positionals));
      case 'chat': {
        const { chatCommand } = await import('./chat.js');
        return await chatCommand(common(positionals), { prompt: values.prompt as string | undefined, model: values.model as string | undefined, yes: Boolean(values.yes), maxSteps: intOption(values['max-steps'], 'max-steps') });
      }
      case 'serve-mcp': {
        const { serveMcpCommand } = await import('./serve-mcp.js');
        return await serveMcpCommand(common(positionals), { http: Boolean(values.http), port: intOption(values.port, 'port') ?? 0 });
      }
    }
    return EXIT.USAGE;
  } catch (error) {
    const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    out.info(formatError(out, error) + (usage ? `\nRun utcp ${command} --help for usage.` : ''));
    return usage ? EXIT.USAGE : EXIT.FAILED;
  }
}

const isEntry = process.argv[1] && import.meta.url === (await import('node:url')).pathToFileURL((await import('node:fs')).realpathSync(process.argv[1])).href;
if (isEntry) {
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
