/**
 * cli-client: command-line programs as tools (manual.json and the node scripts in tools/).
 * Shows argument placeholders, env_vars filled from a variable, a two-step command that passes the
 * first step's output on with $CMD_0_OUTPUT, JSON output parsed for you, an injection attempt that
 * stays a plain value, and the typed error of a failing command.
 *
 *   npm run example -- cli-client
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliExitError, UtcpClient, type CliCallTemplate, type JsonObject } from '../../src/index.js';

const here = dirname(fileURLToPath(import.meta.url));

// The root dir anchors file_path and the commands' working directory (so `node tools/...` works).
// `${GREETING}` in manual "toolbox" is looked up as toolbox_GREETING.
const client = await UtcpClient.create(
  {
    variables: { toolbox_GREETING: 'Good morning' },
    manual_call_templates: [
      // cli tools from a file manual must be allowed explicitly: running programs is a privilege.
      {
        name: 'toolbox',
        call_template_type: 'file',
        file_path: 'manual.json',
        allowed_communication_protocols: ['cli'],
      },
    ],
  },
  { rootDir: here },
);

async function show(name: string, args: JsonObject): Promise<unknown> {
  const result = await client.callTool(name, args);
  console.log(`   ${name} ${JSON.stringify(args)}\n     -> ${JSON.stringify(result)}`);
  return result;
}

try {
  const [registration] = client.initialRegistrations;
  if (!registration.success || registration.warnings.length > 0) {
    throw new Error(
      `manual.json did not load cleanly: ${[...registration.errors, ...registration.warnings].join('; ')}`,
    );
  }

  console.log('1. Tools loaded from manual.json');
  for (const tool of await client.getTools()) {
    const { commands } = tool.tool_call_template as CliCallTemplate;
    console.log(`   ${tool.name.padEnd(20)} ${commands.map((c) => c.command).join('  then  ')}`);
  }

  console.log('\n2. Calls');
  // The placeholder UTCP_ARG_text_UTCP_END becomes one argument; the script prints JSON, which is parsed.
  await show('toolbox.text_stats', { text: 'UTCP calls tools directly' });
  // env_vars: GREETING comes from the variable toolbox_GREETING (the stored tool keeps "${GREETING}").
  await show('toolbox.greet', { name: 'Ada' });
  const greet = await client.getTool('toolbox.greet');
  console.log(`     stored env_vars: ${JSON.stringify((greet!.tool_call_template as CliCallTemplate).env_vars)}`);
  // Two steps in one shell: `ls` (not shown), then a script that reads its output from $CMD_0_OUTPUT.
  await show('toolbox.list_files', { dir: 'tools' });

  console.log('\n3. Argument values are never shell code');
  const attack = 'hi; echo INJECTED $(echo twice) `echo thrice`';
  const stats = (await show('toolbox.text_stats', { text: attack })) as { received: string };
  console.log(`     the program received the text unchanged: ${stats.received === attack}`);

  console.log('\n4. Errors are typed');
  try {
    await client.callTool('toolbox.text_stats', { text: '   ' });
  } catch (error) {
    if (!(error instanceof CliExitError)) throw error;
    console.log(`   CliExitError: exit code ${error.exitCode}, output "${error.outputTail.trim()}"`);
  }
} finally {
  await client.close();
}
console.log('\nDone: client closed.');
