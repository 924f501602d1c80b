/**
 * `npm run example -- coding-agent [options] [manual]...`: a coding agent on the `utcp-kit/tools` toolset
 * (code.read, code.edit, code.bash, ...) next to the tools of any manuals named on the command line.
 * Tools tagged write, exec or network ask for approval; reads run.
 */
import { readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { UtcpClient } from '../../src/index.js';
import { registerCodeTools } from '../../src/tools/index.js';
import { runChatSession } from '../agent-chat/chat-session.js';
import { registerManualArgs } from '../agent-chat/load-manual.js';
import { MODEL_ENV_HELP, modelFromEnv } from '../agent-chat/model-from-env.js';
import { createDemoWorkspace, demoModel, DEMO_FILE, DEMO_PROMPT } from './demo.js';
import { describeChange } from './describe-change.js';

const USAGE = `usage: npm run example -- coding-agent [options] [manual]...

Works on the files under --root with the code.* tools of utcp-kit/tools (read, write, edit, apply_patch, grep,
glob, ls, bash, ...); [manual] adds the tools of a UTCP manual, OpenAPI spec, call template or UTCP config
([name=]<path or URL>).

options:
      --root <dir>       workspace root (default: the current directory)
      --sandbox <mode>   auto (bubblewrap when it works), bwrap or none (default auto)
      --dangerously-run-unsandboxed
                         allow code.bash without a kernel sandbox (--sandbox none, or auto where bubblewrap
                         does not work): commands then run with all your rights (files, secrets, network)
  -p, --prompt <text>    run one task and exit (answer on stdout, tool calls on stderr)
  -y, --yes              allow writes, edits and commands without asking
      --max-steps <n>    tool turns before a final answer is forced (default 16)
      --demo             offline: a throw-away workspace with a bug and a scripted model
  -h, --help

${MODEL_ENV_HELP}`;

function systemPrompt(root: string): string {
  return [
    `You are a coding agent working on the files under ${root}. Paths are relative to that directory.`,
    'Look before you change: use code.ls, code.glob, code.grep and code.read. Change existing files with code.edit,',
    'copying old_string exactly from code.read output (the text after the tab) with enough context to be unique;',
    'create new files with code.write. Run tests with code.bash. Keep changes small and focused, and finish with a short summary of what you changed.',
  ].join(' ');
}

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        root: { type: 'string' },
        sandbox: { type: 'string', default: 'auto' },
        'dangerously-run-unsandboxed': { type: 'boolean', default: false },
        prompt: { type: 'string', short: 'p' },
        yes: { type: 'boolean', short: 'y', default: false },
        'max-steps': { type: 'string' },
        demo: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const sandbox = values.sandbox;
  if (sandbox !== 'auto' && sandbox !== 'bwrap' && sandbox !== 'none') {
    process.stderr.write('--sandbox must be auto, bwrap or none\n');
    return 2;
  }
  const maxSteps = values['max-steps'] === undefined ? undefined : Number(values['max-steps']);
  if (maxSteps !== undefined && (!Number.isInteger(maxSteps) || maxSteps < 0)) {
    process.stderr.write('--max-steps must be a non-negative integer\n');
    return 2;
  }
  const choice = values.demo
    ? { model: demoModel(), description: 'a scripted demo model (offline)' }
    : modelFromEnv(process.env, { stream: process.stdout.isTTY === true });
  if (!choice) {
    process.stderr.write(`No model configured.\n${MODEL_ENV_HELP}\n`);
    return 2;
  }

  const root = values.demo ? await createDemoWorkspace() : resolve(values.root ?? process.cwd());
  const client = await UtcpClient.create({});
  try {
    const code = await registerCodeTools(client, {
      root,
      sandbox,
      dangerouslyRunUnsandboxed: values['dangerously-run-unsandboxed'],
    });
    let failed = false;
    for (const manual of await registerManualArgs(client, positionals, process.cwd())) {
      if (manual.result.success) {
        process.stderr.write(
          `Loaded ${manual.name}: ${manual.result.manual.tools.length} tools from ${manual.source}\n`,
        );
        for (const w of manual.result.warnings ?? []) process.stderr.write(`  warning: ${w}\n`);
      } else {
        failed = true;
        process.stderr.write(
          `× manual ${manual.name} (${manual.source}) failed to register: ${manual.result.errors.join('; ')}\n`,
        );
      }
    }
    if (failed) return 1;
    process.stderr.write(
      `Workspace: ${root}\nSandbox: ${code.sandbox}${code.sandboxReason ? ` (${code.sandboxReason})` : ''}\nModel: ${choice.description}\n`,
    );
    const exit = await runChatSession({
      client,
      model: choice.model,
      system: systemPrompt(root),
      policy: { policy: [{ tags: ['write', 'exec', 'network'], action: 'ask' }], defaultAction: 'allow' },
      yes: values.yes,
      nonInteractiveHint: 'rerun with --yes to allow file changes and commands',
      describeApproval: describeChange,
      prompt: values.prompt ?? (values.demo ? DEMO_PROMPT : undefined),
      maxSteps,
    });
    if (values.demo) process.stderr.write(`\n${DEMO_FILE} is now:\n${await readFile(join(root, DEMO_FILE), 'utf8')}`);
    return exit;
  } finally {
    await client.close();
    if (values.demo) await rm(root, { recursive: true, force: true });
  }
}

process.exitCode = await main().catch((error: unknown) => {
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  return 1;
});
