/** A paused run's JSON, resumed in a new process with a new client (the built dist), runs the approved call exactly once. */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { openAIText, openAIToolCalls, startLlmServer, type LlmServer } from './helpers/llm-server.js';

const run = promisify(execFile);
const fixture = fileURLToPath(new URL('../fixtures/agent/resume-run.mjs', import.meta.url));
let llm: LlmServer | undefined;
let dir: string | undefined;
let closeCounter: (() => void) | undefined;

afterEach(async () => {
  await llm?.close();
  closeCounter?.();
  if (dir) rmSync(dir, { recursive: true, force: true });
  llm = undefined;
  dir = undefined;
});

async function startCounter(orders: string[]): Promise<string> {
  const counter = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      orders.push(body);
      res.end(String(orders.length));
    });
  });
  await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
  closeCounter = () => {
    counter.closeAllConnections();
    counter.close();
  };
  return `http://127.0.0.1:${(counter.address() as AddressInfo).port}/orders`;
}

/** Each child (plain node on dist/) takes about a second; up to three run per test, all within the test's timeout. */
const CHILD_DEADLINE_MS = 30_000;

describe('resumeAgent across processes', { timeout: 3 * CHILD_DEADLINE_MS + 10_000 }, () => {
  it('a signed state resumes in another process with the key, and is refused there once changed on disk', async () => {
    const orders: string[] = [];
    const counterUrl = await startCounter(orders);
    llm = await startLlmServer([
      openAIToolCalls([{ id: 'call_order', name: 'shop__place_order', arguments: '{"item":"lamp"}' }]),
      openAIText('Your lamp is ordered.'),
    ]);
    dir = mkdtempSync(join(tmpdir(), 'utcp-resume-'));
    const stateFile = join(dir, 'state.json');
    const key = 'process-test-key-0123456789abcdef';
    await run(process.execPath, [fixture, 'start', llm.url, counterUrl, stateFile, key], {
      timeout: CHILD_DEADLINE_MS,
    });
    const signed = readFileSync(stateFile, 'utf8');
    expect(JSON.parse(signed).mac).toMatch(/^[0-9a-f]{64}$/);
    writeFileSync(stateFile, signed.replace('{\\"item\\":\\"lamp\\"}', '{\\"item\\":\\"piano\\"}'));
    const tampered = await run(process.execPath, [fixture, 'resume', llm.url, counterUrl, stateFile, key], {
      timeout: CHILD_DEADLINE_MS,
    });
    expect(JSON.parse(tampered.stdout)).toEqual({
      error: 'AgentStateError',
      code: 'INVALID_CONFIG',
      path: 'state.mac',
    });
    expect(orders).toEqual([]);
    writeFileSync(stateFile, signed);
    const second = await run(process.execPath, [fixture, 'resume', llm.url, counterUrl, stateFile, key], {
      timeout: CHILD_DEADLINE_MS,
    });
    expect(JSON.parse(second.stdout)).toEqual({ status: 'completed', text: 'Your lamp is ordered.' });
    expect(orders).toEqual(['{"item":"lamp"}']);
  });

  it('process 1 pauses and writes the state; process 2 resumes it with a new client; the approved call runs once', async () => {
    const orders: string[] = [];
    const counterUrl = await startCounter(orders);
    llm = await startLlmServer([
      openAIToolCalls([{ id: 'call_order', name: 'shop__place_order', arguments: '{"item":"lamp"}' }]),
      openAIText('Your lamp is ordered.'),
    ]);
    dir = mkdtempSync(join(tmpdir(), 'utcp-resume-'));
    const stateFile = join(dir, 'state.json');

    const first = await run(process.execPath, [fixture, 'start', llm.url, counterUrl, stateFile], {
      timeout: CHILD_DEADLINE_MS,
    });
    expect(JSON.parse(first.stdout)).toEqual({
      status: 'paused',
      pending: [
        { toolCallId: 'call_order', toolName: 'shop.place_order', args: { item: 'lamp' }, reason: 'no_approver' },
      ],
    });
    expect(existsSync(stateFile)).toBe(true);
    expect(orders).toEqual([]);

    const second = await run(process.execPath, [fixture, 'resume', llm.url, counterUrl, stateFile], {
      timeout: CHILD_DEADLINE_MS,
    });
    expect(JSON.parse(second.stdout)).toEqual({ status: 'completed', text: 'Your lamp is ordered.' });
    expect(orders).toEqual(['{"item":"lamp"}']);
    expect(llm.requests).toHaveLength(2);
    expect(llm.requests[1].body.messages.slice(-2)).toMatchObject([
      { role: 'assistant', tool_calls: [{ id: 'call_order', function: { name: 'shop__place_order' } }] },
      { role: 'tool', tool_call_id: 'call_order', content: 'order 1 placed for lamp' },
    ]);
  });
});
