/**
 * openapi-client: call a local API through its OpenAPI 3 description (openapi.yaml in this folder),
 * registered with an ordinary `http` call template that points at the spec URL. Shows the generated
 * tool names and inputs, an `openapi_filter`, bearer auth from a variable, calls, and a typed error.
 *
 *   npm run example -- openapi-client
 */
import {
  HttpStatusError,
  ToolNotFoundError,
  UtcpClient,
  type HttpCallTemplate,
  type JsonObject,
  type JsonSchema,
  type Tool,
} from '../../src/index.js';
import { startBookshop } from './server.js';

const TOKEN = 'example-token-456'; // in real life: process.env.BOOKSHOP_TOKEN

const shop = await startBookshop(TOKEN);

// The spec's `bearerAuth` security scheme becomes auth referring to ${BEARER_AUTH};
// for the manual "bookshop" that variable is looked up as bookshop_BEARER_AUTH.
const client = await UtcpClient.create({ variables: { bookshop_BEARER_AUTH: TOKEN } });

/** `bookId*: integer, Accept-Language: "en"|"fr"` (* = required). */
function describeInputs(tool: Tool): string {
  const properties = (tool.inputs.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((tool.inputs.required ?? []) as string[]);
  const typeOf = (s: JsonSchema) =>
    Array.isArray(s.enum) ? s.enum.map((v) => JSON.stringify(v)).join('|') : String(s.type ?? 'any');
  const parts = Object.entries(properties).map(
    ([name, schema]) => `${name}${required.has(name) ? '*' : ''}: ${typeOf(schema)}`,
  );
  return parts.join(', ') || '(none)';
}

async function show(name: string, args: JsonObject): Promise<void> {
  const result = await client.callTool(name, args);
  console.log(`   ${name} ${JSON.stringify(args)}`);
  console.log(`     sent:   ${shop.requests.at(-1)}`);
  console.log(`     result: ${JSON.stringify(result)}`);
}

try {
  const registration = await client.registerManual({
    name: 'bookshop',
    call_template_type: 'http',
    url: `${shop.url}/openapi.yaml`, // JSON or YAML; a UTCP manual at that URL would work the same way
    openapi_filter: { exclude_tags: ['admin'] }, // keep deleteBook out of reach
  });
  if (!registration.success) throw new Error(`the spec did not load: ${registration.errors.join('; ')}`);

  console.log('1. Tools generated from openapi.yaml (* = required)');
  for (const tool of registration.manual.tools) {
    console.log(`   ${tool.name.padEnd(34)} ${describeInputs(tool)}`);
  }
  console.log(`   conversion notes: ${registration.warnings.join('; ') || 'none'}`);

  console.log('\n2. What the converter made of two operations');
  const getBook = await client.getTool('bookshop.getBook');
  const { url, header_fields } = getBook!.tool_call_template as HttpCallTemplate;
  console.log(`   getBook: url ${url}, header_fields ${JSON.stringify(header_fields)}`);
  const addBook = await client.getTool('bookshop.addBook');
  console.log(`   addBook: auth ${JSON.stringify(addBook!.tool_call_template.auth)}`);

  console.log('\n3. Calls');
  await show('bookshop.listBooks', { author: 'Ursula K. Le Guin', limit: 1 }); // query parameters
  await show('bookshop.getBook', { bookId: 2, 'Accept-Language': 'fr' }); // path + header parameters
  await show('bookshop.get_books_bookId_reviews', { bookId: 1 });
  await show('bookshop.addBook', { body: { title: 'Kindred', author: 'Octavia E. Butler' } }); // JSON body + bearer token

  console.log('\n4. Errors are typed');
  try {
    await client.callTool('bookshop.getBook', { bookId: 42 });
  } catch (error) {
    if (!(error instanceof HttpStatusError)) throw error;
    console.log(`   HttpStatusError: status ${error.status}, body ${error.bodyExcerpt}`);
  }
  try {
    await client.callTool('bookshop.deleteBook', { bookId: 1 });
  } catch (error) {
    if (!(error instanceof ToolNotFoundError)) throw error;
    console.log(`   ToolNotFoundError: ${error.message} (filtered out by openapi_filter)`);
  }
} finally {
  await client.close();
  await shop.close();
}
console.log('\nDone: client and server closed.');
