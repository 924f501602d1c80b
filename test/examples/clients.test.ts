/**
 * The client examples run exactly as a user runs them (`npm run example -- <name>`, i.e.
 * `node --import tsx examples/run.ts <name>` from the repo root): offline, exit code 0, the expected
 * output, nothing on stderr, and a prompt exit on their own once they have closed their client.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const RUN_TIMEOUT_MS = 60_000;
/** Each example prints "Done: ..." after `client.close()`; the process must end soon after. A leaked timer or socket keeps it alive. */
const EXIT_AFTER_DONE_MS = 5_000;

interface ExampleRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Milliseconds between the "Done:" line and the process exit, or undefined if it never printed it. */
  exitAfterDoneMs: number | undefined;
}

function runExample(name: string): Promise<ExampleRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/run.ts', name], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let doneAt: number | undefined;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (doneAt === undefined && /^Done: /m.test(stdout)) doneAt = Date.now();
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const killer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.on('error', fail);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      done({ code, signal, stdout, stderr, exitAfterDoneMs: doneAt === undefined ? undefined : Date.now() - doneAt });
    });
  });
}

/** Asserts a clean run: exit 0 on its own, "Done:" printed, a prompt exit after it, and a silent stderr. */
function expectCleanExit(run: ExampleRun): void {
  expect(run.stderr).toBe('');
  expect(run.signal).toBeNull(); // SIGKILL here means it hung until RUN_TIMEOUT_MS
  expect(run.code).toBe(0);
  expect(run.exitAfterDoneMs).toBeDefined();
  expect(run.exitAfterDoneMs!).toBeLessThan(EXIT_AFTER_DONE_MS);
}

describe.concurrent('client examples (npm run example -- <name>)', { timeout: RUN_TIMEOUT_MS + 10_000 }, () => {
  it('http-client calls a REST API through manual.json with path, query, body, header, api_key auth and an SSE stream', async () => {
    const run = await runExample('http-client');
    expectCleanExit(run);
    const out = run.stdout;
    for (const tool of ['tasks.list_tasks', 'tasks.get_task', 'tasks.create_task', 'tasks.watch_task'])
      expect(out).toContain(`   ${tool} `);
    expect(out).toContain('variables it needs: tasks_BASE_URL, tasks_API_KEY');
    expect(out).toContain(
      'auth: {"auth_type":"api_key","api_key":"${API_KEY}","var_name":"X-Api-Key","location":"header"}',
    );
    expect(out).not.toContain('example-key-123'); // the key never shows up in stored tools or results
    expect(out).toContain(
      'sent:   GET /tasks?status=open&limit=1\n     result: [{"id":2,"title":"Ship version 1.0","status":"open"}]',
    );
    expect(out).toContain('sent:   GET /tasks/2\n');
    expect(out).toContain('sent:   POST /tasks  Idempotency-Key: req-42  body: {"title":"Try utcp-kit"}');
    expect(out).toContain('"idempotency_key":"req-42"');
    expect(out).toContain(
      'event: {"task":2,"percent":25}\n   event: {"task":2,"percent":75}\n   event: {"task":2,"percent":100}',
    );
    expect(out).toContain('HttpStatusError: status 404, body {"error":"no task with id 99"}');
    expect(out).toContain('UtcpArgumentsError: Invalid arguments for tasks.get_task: id: must be integer');
  });

  it('openapi-client turns openapi.yaml into tools, filters one out, and calls them with bearer auth', async () => {
    const run = await runExample('openapi-client');
    expectCleanExit(run);
    const out = run.stdout;
    expect(out).toMatch(/bookshop\.listBooks\s+author: string, limit: integer\n/);
    expect(out).toMatch(/bookshop\.addBook\s+body\*: object\n/);
    expect(out).toMatch(/bookshop\.getBook\s+bookId\*: integer, Accept-Language: "en"\|"fr"\n/);
    expect(out).toMatch(/bookshop\.get_books_bookId_reviews\s+bookId\*: integer\n/);
    expect(out).not.toMatch(/^   bookshop\.deleteBook /m); // not in the tool list
    expect(out).toContain('conversion notes: 1 operations filtered');
    expect(out).toContain(
      'addBook: auth {"auth_type":"api_key","api_key":"Bearer ${BEARER_AUTH}","var_name":"Authorization","location":"header"}',
    );
    expect(out).toContain('sent:   GET /api/books?author=Ursula%20K.%20Le%20Guin&limit=1');
    expect(out).toContain(
      'sent:   GET /api/books/2  Accept-Language: fr\n     result: {"id":2,"title":"The Dispossessed","author":"Ursula K. Le Guin","blurb":"Deux mondes, un mur."}',
    );
    expect(out).toContain('result: [{"stars":5,"text":"A classic."}]');
    expect(out).toContain(
      'sent:   POST /api/books  Authorization: Bearer ***  body: {"title":"Kindred","author":"Octavia E. Butler"}',
    );
    expect(out).toContain('HttpStatusError: status 404, body {"error":"no book with id 42"}');
    expect(out).toContain('ToolNotFoundError: Tool not found: bookshop.deleteBook');
  });

  it('cli-client runs node scripts as tools: placeholders, env_vars, $CMD_0_OUTPUT, JSON output, no injection, CliExitError', async () => {
    const run = await runExample('cli-client');
    expectCleanExit(run);
    const out = run.stdout;
    for (const tool of ['toolbox.text_stats', 'toolbox.greet', 'toolbox.list_files'])
      expect(out).toContain(`   ${tool} `);
    expect(out).toContain('-> {"received":"UTCP calls tools directly","words":4,"characters":25,"lines":1}');
    expect(out).toContain('-> "Good morning, Ada!"');
    expect(out).toContain('stored env_vars: {"GREETING":"${GREETING}"}');
    expect(out).toContain('-> {"count":3,"items":["greet.mjs","lines-to-json.mjs","text-stats.mjs"]}');
    expect(out).toContain('the program received the text unchanged: true');
    expect(out).not.toMatch(/^INJECTED/m); // what the shell would have printed had it run the text
    expect(out).toContain('CliExitError: exit code 2, output "text-stats: the text is empty"');
  });

  it('mcp-client uses server-everything over stdio: calls, progress, cancellation and typed errors', async () => {
    const run = await runExample('mcp-client');
    expectCleanExit(run);
    const out = run.stdout;
    for (const tool of ['echo', 'get-sum', 'trigger-long-running-operation'])
      expect(out).toContain(`   demo.everything.${tool} `);
    expect(out).toContain('"add two numbers" -> demo.everything.get-sum');
    expect(out).toContain('echo    -> "Echo: hello from UTCP"');
    expect(out).toContain('get-sum -> "The sum of 2 and 40 is 42."');
    expect(out).toContain('   progress 1/3\n');
    expect(out).toContain('result: "Long running operation completed. Duration: 0.6 seconds, Steps: 3."');
    expect(out).toMatch(/UtcpAbortError after \d+\.\d s: MCP tools\/call trigger-long-running-operation/);
    expect(out).toContain('the session is still usable: "Echo: still here"');
    expect(out).toContain('UtcpArgumentsError: Invalid arguments for demo.everything.get-sum: a: must be number');
    expect(out).toContain(
      'ToolExecutionError: MCP tool everything.get-resource-reference returned an error: Invalid resourceId: 0',
    );
  });

  it('sockets-client discovers, calls and streams over WebSocket, TCP, UDP, GraphQL and gRPC', async () => {
    const run = await runExample('sockets-client');
    expectCleanExit(run);
    const out = run.stdout;
    expect(out).toContain('tools: ws.add, ws.divide, ws.countdown');
    expect(out).toContain('ws.add {"a":2,"b":3} -> 5');
    expect(out).toContain('stream ws.countdown {"from":3} -> 3 2 1 0');
    expect(out).toMatch(/ws\.divide \{"a":1,"b":0\} -> ToolExecutionError: .*division by zero/);

    expect(out).toContain('tools: tcp.add, tcp.countdown, tcp.slow');
    expect(out).toContain('tcp.add {"a":2,"b":3} -> 5');
    expect(out).toContain('stream tcp.countdown {"from":3} -> 3 2 1 0');
    expect(out).toMatch(/tcp\.slow \(300 ms deadline\) -> UtcpTimeoutError: .*timed out/);

    expect(out).toContain('tools: udp.add, udp.lost');
    expect(out).toContain('udp.add {"a":2,"b":3} -> 5');
    expect(out).toMatch(/udp\.lost \(300 ms deadline\) -> UtcpTimeoutError: .*timed out/);

    expect(out).toContain('tools: books.add, books.book, books.addBook, books.countdown');
    expect(out).toContain('books.book document: query ($id: ID!) { book(id: $id) { id title author { name born } } }');
    expect(out).toContain(
      'books.book {"id":"2"} -> {"id":"2","title":"Kindred","author":{"name":"Octavia E. Butler","born":1947}}',
    );
    expect(out).toContain('books.addBook {"title":"Solaris","author":"Stanisław Lem"} -> {"id":"3","title":"Solaris"');
    expect(out).toContain('stream books.countdown {"from":3} -> 3 2 1 0');
    expect(out).toMatch(/books\.book \{"id":"9"\} -> GraphqlError: .*no book with id 9/);

    expect(out).toContain('tools: grpc.add, grpc.divide, grpc.countdown');
    expect(out).toContain('grpc.add {"a":2,"b":3} -> 5');
    expect(out).toContain('stream grpc.countdown {"from":3} -> 3 2 1 0');
    expect(out).toMatch(/grpc\.divide \{"a":1,"b":0\} -> GrpcError: .*INVALID_ARGUMENT .*division by zero/);
  });
});
