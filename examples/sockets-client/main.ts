/**
 * sockets-client: tools over WebSocket, TCP, UDP, GraphQL and gRPC, each served by a small local
 * server from servers/. One client talks to all of them; each protocol has its own function below:
 * discovery, a call, a stream where the protocol streams, and a typed error.
 *
 *   npm run example -- sockets-client
 */
import {
  ToolExecutionError,
  UtcpClient,
  UtcpTimeoutError,
  type CallTemplate,
  type GraphqlCallTemplate,
  type JsonObject,
} from '../../src/index.js';
import { startGraphqlServer } from './servers/graphql-server.js';
import { startGrpcServer } from './servers/grpc-server.js';
import { startTcpServer } from './servers/tcp-server.js';
import { startUdpServer } from './servers/udp-server.js';
import { startWebSocketServer } from './servers/websocket-server.js';

type ErrorClass = abstract new (...args: never[]) => Error;

async function registerAndList(client: UtcpClient, template: CallTemplate): Promise<void> {
  const result = await client.registerManual(template);
  if (!result.success) throw new Error(`${template.name} did not register: ${result.errors.join('; ')}`);
  console.log(`   tools: ${result.manual.tools.map((t) => t.name).join(', ')}`);
}

async function call(client: UtcpClient, name: string, args: JsonObject): Promise<void> {
  console.log(`   ${name} ${JSON.stringify(args)} -> ${JSON.stringify(await client.callTool(name, args))}`);
}

async function stream(client: UtcpClient, name: string, args: JsonObject): Promise<void> {
  const items: string[] = [];
  for await (const item of client.callToolStreaming(name, args)) items.push(JSON.stringify(item));
  console.log(`   stream ${name} ${JSON.stringify(args)} -> ${items.join(' ')}`);
}

/** Runs a call that must fail and prints its typed error. */
async function failing(name: string, run: () => Promise<unknown>, expected: ErrorClass): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (!(error instanceof expected)) throw error;
    console.log(`   ${name} -> ${error.name}: ${error.message}`);
    return;
  }
  throw new Error(`${name} was expected to fail`);
}

// ---------------------------------------------------------------- WebSocket
// Discovery sends {"type":"utcp"} on the connection; the server's manual gives each tool a message
// template with UTCP_ARG_<name>_UTCP_ARG placeholders and a request_id, so replies are matched to
// calls. Frames of type tool_response carry results, tool_error failures, stream_end ends a stream.
async function websocketDemo(client: UtcpClient): Promise<void> {
  console.log('WebSocket');
  const server = await startWebSocketServer();
  try {
    await registerAndList(client, { name: 'ws', call_template_type: 'websocket', url: server.url, timeout: 5 });
    await call(client, 'ws.add', { a: 2, b: 3 });
    await stream(client, 'ws.countdown', { from: 3 });
    await failing('ws.divide {"a":1,"b":0}', () => client.callTool('ws.divide', { a: 1, b: 0 }), ToolExecutionError);
  } finally {
    await client.deregisterManual('ws'); // closes the pooled connection
    await server.close();
  }
}

// ---------------------------------------------------------------- TCP
// One connection per call. The manual template frames messages with a newline delimiter and wraps
// arguments as {"tool", "args"}; the server's `countdown` tool brings its own template (NDJSON
// answers after a half-close) so it can stream.
async function tcpDemo(client: UtcpClient): Promise<void> {
  console.log('\nTCP');
  const server = await startTcpServer();
  try {
    await registerAndList(client, {
      name: 'tcp',
      call_template_type: 'tcp',
      host: '127.0.0.1',
      port: server.port,
      framing_strategy: 'delimiter',
      message_delimiter: '\n',
      request_wrapper: 'tool_args',
      timeout: 5000,
    });
    await call(client, 'tcp.add', { a: 2, b: 3 });
    await stream(client, 'tcp.countdown', { from: 3 });
    await failing(
      'tcp.slow (300 ms deadline)',
      () => client.callTool('tcp.slow', {}, { timeoutMs: 300 }),
      UtcpTimeoutError,
    );
  } finally {
    await client.deregisterManual('tcp');
    await server.close();
  }
}

// ---------------------------------------------------------------- UDP
// One datagram out, one back (number_of_response_datagrams defaults to 1). Only datagrams from the
// target's address are accepted. A lost answer ends in a timeout.
async function udpDemo(client: UtcpClient): Promise<void> {
  console.log('\nUDP');
  const server = await startUdpServer();
  try {
    await registerAndList(client, {
      name: 'udp',
      call_template_type: 'udp',
      host: '127.0.0.1',
      port: server.port,
      request_wrapper: 'tool_args',
      timeout: 5000,
    });
    await call(client, 'udp.add', { a: 2, b: 3 });
    await failing(
      'udp.lost (300 ms deadline)',
      () => client.callTool('udp.lost', {}, { timeoutMs: 300 }),
      UtcpTimeoutError,
    );
  } finally {
    await client.deregisterManual('udp');
    await server.close();
  }
}

// ---------------------------------------------------------------- GraphQL
// Discovery is introspection: every query, mutation and subscription field becomes a tool with an
// inputs schema and a generated document (selection set included). Subscriptions stream over
// WebSocket (graphql-transport-ws). Errors in the response become a ToolExecutionError (GraphqlError).
async function graphqlDemo(client: UtcpClient): Promise<void> {
  console.log('\nGraphQL');
  const server = await startGraphqlServer();
  try {
    await registerAndList(client, { name: 'books', call_template_type: 'graphql', url: server.url });
    const book = await client.getTool('books.book');
    console.log(
      `   books.book document: ${(book!.tool_call_template as GraphqlCallTemplate).query?.replace(/\s+/g, ' ')}`,
    );
    await call(client, 'books.add', { a: 2, b: 3 });
    await call(client, 'books.book', { id: '2' });
    await call(client, 'books.addBook', { title: 'Solaris', author: 'Stanisław Lem' });
    await stream(client, 'books.countdown', { from: 3 });
    await failing('books.book {"id":"9"}', () => client.callTool('books.book', { id: '9' }), ToolExecutionError);
  } finally {
    await client.deregisterManual('books');
    await server.close();
  }
}

// ---------------------------------------------------------------- gRPC
// The grpcpb.UTCPService protocol: GetManual for discovery, CallTool with JSON arguments,
// CallToolStream for streams. A non-OK status becomes a ToolExecutionError (GrpcError).
// (Any other service works too: set service_name, and the schema comes from server reflection or a .proto file.)
async function grpcDemo(client: UtcpClient): Promise<void> {
  console.log('\ngRPC');
  const server = await startGrpcServer();
  try {
    await registerAndList(client, { name: 'grpc', call_template_type: 'grpc', host: '127.0.0.1', port: server.port });
    await call(client, 'grpc.add', { a: 2, b: 3 });
    await stream(client, 'grpc.countdown', { from: 3 });
    await failing(
      'grpc.divide {"a":1,"b":0}',
      () => client.callTool('grpc.divide', { a: 1, b: 0 }),
      ToolExecutionError,
    );
  } finally {
    await client.deregisterManual('grpc'); // closes the channel
    await server.close();
  }
}

const client = await UtcpClient.create();
try {
  await websocketDemo(client);
  await tcpDemo(client);
  await udpDemo(client);
  await graphqlDemo(client);
  await grpcDemo(client);
} finally {
  await client.close();
}
console.log('\nDone: client and servers closed.');
