/**
 * http-client: call a REST API through a UTCP manual (manual.json in this folder).
 * Shows path parameters, query parameters, a JSON body, a header argument, api_key auth from a
 * variable, a Server-Sent Events stream, and the typed error of a failed call.
 *
 *   npm run example -- http-client
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  HttpStatusError,
  UtcpArgumentsError,
  UtcpClient,
  type FileCallTemplate,
  type JsonObject,
} from '../../src/index.js';
import { startTaskApi } from './server.js';

const here = dirname(fileURLToPath(import.meta.url));
const API_KEY = 'example-key-123'; // in real life: process.env.TASKS_API_KEY

const api = await startTaskApi(API_KEY);

// A manual read from a file. Its tools speak http and sse, which must be allowed explicitly
// (by default a manual's tools may only use the manual's own protocol, here "file").
const TASKS_MANUAL = {
  name: 'tasks',
  call_template_type: 'file',
  file_path: 'manual.json',
  allowed_communication_protocols: ['http', 'sse'],
} satisfies FileCallTemplate;

// The manual refers to ${BASE_URL} and ${API_KEY}. Variables are namespaced by manual name,
// so for the manual "tasks" they are looked up as tasks_BASE_URL and tasks_API_KEY.
const client = await UtcpClient.create(
  {
    variables: { tasks_BASE_URL: api.url, tasks_API_KEY: API_KEY },
    manual_call_templates: [TASKS_MANUAL],
  },
  { rootDir: here },
);

/** Calls a tool and prints its result next to the request the server received. */
async function show(name: string, args: JsonObject): Promise<void> {
  const result = await client.callTool(name, args);
  console.log(`   ${name} ${JSON.stringify(args)}`);
  console.log(`     sent:   ${api.requests.at(-1)}`);
  console.log(`     result: ${JSON.stringify(result)}`);
}

try {
  const [registration] = client.initialRegistrations;
  if (!registration.success || registration.warnings.length > 0) {
    throw new Error(
      `manual.json did not load cleanly: ${[...registration.errors, ...registration.warnings].join('; ')}`,
    );
  }

  console.log('1. Tools loaded from manual.json');
  for (const tool of await client.getTools()) console.log(`   ${tool.name.padEnd(18)} ${tool.description}`);
  const needed = await client.getRequiredVariablesForManualAndTools(TASKS_MANUAL);
  console.log(`   variables it needs: ${needed.join(', ')}`);

  console.log('\n2. Stored tools keep the ${API_KEY} reference, never the key');
  const stored = await client.getTool('tasks.get_task');
  console.log(`   tasks.get_task auth: ${JSON.stringify(stored?.tool_call_template.auth)}`);

  console.log('\n3. Search');
  const hits = await client.searchTools('create a new task', 2);
  console.log(`   "create a new task" -> ${hits.map((t) => t.name).join(', ')}`);

  console.log('\n4. Calls');
  await show('tasks.list_tasks', { status: 'open', limit: 1 }); // other arguments -> query string
  await show('tasks.get_task', { id: 2 }); // {id} in the URL -> path parameter
  await show('tasks.create_task', { task: { title: 'Try utcp-kit' }, 'Idempotency-Key': 'req-42' }); // body_field + header_fields

  console.log('\n5. Streaming (Server-Sent Events)');
  for await (const event of client.callToolStreaming('tasks.watch_task', { id: 2 })) {
    console.log(`   event: ${JSON.stringify(event)}`);
  }

  console.log('\n6. Errors are typed');
  try {
    await client.callTool('tasks.get_task', { id: 99 });
  } catch (error) {
    if (!(error instanceof HttpStatusError)) throw error;
    console.log(`   HttpStatusError: status ${error.status}, body ${error.bodyExcerpt}`);
  }
  try {
    await client.callTool('tasks.get_task', { id: 'two' }); // rejected before any request is sent
  } catch (error) {
    if (!(error instanceof UtcpArgumentsError)) throw error;
    console.log(`   UtcpArgumentsError: ${error.message}`);
  }
} finally {
  await client.close();
  await api.close();
}
console.log('\nDone: client and server closed.');
