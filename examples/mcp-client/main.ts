/**
 * mcp-client: use the tools of an MCP server through UTCP. The server is the reference
 * `@modelcontextprotocol/server-everything`, started over stdio as a child process of the client.
 * Shows listing and searching its tools, calls, progress notifications, cancelling a call with an
 * AbortController, and typed errors.
 *
 *   npm run example -- mcp-client
 */
import { createRequire } from 'node:module';
import {
  ToolExecutionError,
  UtcpAbortError,
  UtcpArgumentsError,
  UtcpClient,
  type McpCallTemplate,
} from '../../src/index.js';

// The server's entry file from node_modules; any stdio MCP server works the same way (e.g. command "npx").
const serverEntry = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');

// The standard `mcpServers` config shape. The child gets an allow-listed environment, not yours.
const manual: McpCallTemplate = {
  name: 'demo',
  call_template_type: 'mcp',
  config: { mcpServers: { everything: { command: process.execPath, args: [serverEntry, 'stdio'] } } },
};

/** The description's first line, cut at a word boundary. */
function firstWords(text: string, max: number): string {
  const line = text.split('\n')[0];
  return line.length <= max ? line : `${line.slice(0, line.lastIndexOf(' ', max))}…`;
}

const client = await UtcpClient.create();
try {
  const registration = await client.registerManual(manual);
  if (!registration.success) throw new Error(`the MCP server did not start: ${registration.errors.join('; ')}`);

  // MCP tools are named <manual>.<server>.<tool>.
  console.log(`1. ${registration.manual.tools.length} tools from server-everything`);
  for (const tool of registration.manual.tools)
    console.log(`   ${tool.name.padEnd(48)} ${firstWords(tool.description, 60)}`);

  console.log('\n2. Search');
  const [best] = await client.searchTools('add two numbers', 1);
  console.log(`   "add two numbers" -> ${best.name}  inputs: ${JSON.stringify(best.inputs.properties)}`);

  console.log('\n3. Calls');
  console.log(
    `   echo    -> ${JSON.stringify(await client.callTool('demo.everything.echo', { message: 'hello from UTCP' }))}`,
  );
  console.log(`   get-sum -> ${JSON.stringify(await client.callTool(best.name, { a: 2, b: 40 }))}`);

  console.log('\n4. Progress notifications');
  const done = await client.callTool(
    'demo.everything.trigger-long-running-operation',
    { duration: 0.6, steps: 3 },
    { onProgress: (event) => console.log(`   progress ${event.progress}/${event.total}`) },
  );
  console.log(`   result: ${JSON.stringify(done)}`);

  console.log('\n5. Cancelling a call (a 20 s operation, cancelled at its first progress notification)');
  const controller = new AbortController();
  const started = Date.now();
  try {
    await client.callTool(
      'demo.everything.trigger-long-running-operation',
      { duration: 20, steps: 40 },
      {
        signal: controller.signal,
        onProgress: () => controller.abort(), // the server is told with notifications/cancelled
      },
    );
  } catch (error) {
    if (!(error instanceof UtcpAbortError)) throw error;
    console.log(`   UtcpAbortError after ${((Date.now() - started) / 1000).toFixed(1)} s: ${error.message}`);
  }
  console.log(
    `   the session is still usable: ${JSON.stringify(await client.callTool('demo.everything.echo', { message: 'still here' }))}`,
  );

  console.log('\n6. Errors are typed');
  try {
    await client.callTool('demo.everything.get-sum', { a: 'two', b: 40 }); // checked against inputs, never sent
  } catch (error) {
    if (!(error instanceof UtcpArgumentsError)) throw error;
    console.log(`   UtcpArgumentsError: ${error.message}`);
  }
  try {
    await client.callTool('demo.everything.get-resource-reference', { resourceId: 0 }); // the server answers isError
  } catch (error) {
    if (!(error instanceof ToolExecutionError)) throw error;
    console.log(`   ToolExecutionError: ${error.message}`);
  }
} finally {
  await client.close(); // ends the server process too
}
console.log('\nDone: client closed, server process stopped.');
