/**
 * `npm run example -- agent-chat [options] <manual>...`: chat with a model that can call the tools of any
 * UTCP manual, OpenAPI spec (file or URL) or call template file. Tool calls are shown on stderr, answers on stdout.
 */
import { parseArgs } from 'node:util';
import { UtcpClient } from '../../src/index.js';
import { runChatSession } from './chat-session.js';
import { DEMO_PROMPT, demoModel, demoTools } from './demo.js';
import { registerManualArgs } from './load-manual.js';
import { MODEL_ENV_HELP, modelFromEnv } from './model-from-env.js';

const USAGE = `usage: npm run example -- agent-chat [options] <manual>...

<manual> is [name=]<path or URL> of a UTCP manual, an OpenAPI spec (JSON/YAML), a call template or a UTCP config.

options:
  -p, --prompt <text>    run one turn and exit (answer on stdout, tool calls on stderr)
  -y, --yes              run every tool call without asking
      --allow <glob>     run matching tools (e.g. "weather.*") without asking; repeatable
      --system <text>    system prompt
      --max-steps <n>    tool turns before a final answer is forced (default 16)
      --demo             offline: a demo weather tool and a scripted model
  -h, --help

${MODEL_ENV_HELP}`;

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        prompt: { type: 'string', short: 'p' },
        yes: { type: 'boolean', short: 'y', default: false },
        allow: { type: 'string', multiple: true, default: [] },
        system: { type: 'string' },
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
  const maxSteps = values['max-steps'] === undefined ? undefined : Number(values['max-steps']);
  if (maxSteps !== undefined && (!Number.isInteger(maxSteps) || maxSteps < 0)) {
    process.stderr.write('--max-steps must be a non-negative integer\n');
    return 2;
  }
  if (!values.demo && positionals.length === 0) {
    process.stderr.write(`Name at least one manual.\n\n${USAGE}\n`);
    return 2;
  }
  const choice = values.demo
    ? { model: demoModel(), description: 'a scripted demo model (offline)' }
    : modelFromEnv(process.env, { stream: process.stdout.isTTY === true });
  if (!choice) {
    process.stderr.write(`No model configured.\n${MODEL_ENV_HELP}\n`);
    return 2;
  }

  const client = await UtcpClient.create({});
  try {
    if (values.demo) await client.registerFunctions('demo', demoTools);
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
    process.stderr.write(`Model: ${choice.description}\n`);
    return await runChatSession({
      client,
      model: choice.model,
      system:
        values.system ??
        'You are a helpful assistant. Use the tools when they help; say which tool an answer came from.',
      policy: {
        policy: values.allow.length > 0 ? [{ tools: values.allow, action: 'allow' }] : [],
        defaultAction: 'ask',
      },
      yes: values.yes,
      prompt: values.prompt ?? (values.demo ? DEMO_PROMPT : undefined),
      maxSteps,
    });
  } finally {
    await client.close();
  }
}

process.exitCode = await main().catch((error: unknown) => {
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  return 1;
});
