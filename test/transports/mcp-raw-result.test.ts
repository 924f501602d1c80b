/** `callTool(..., { raw: true })` returns the MCP CallToolResult unmapped, isError included, through the client. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { fixtureServer } from '../fixtures/mcp/harness.js';

let client: UtcpClient;

beforeAll(async () => {
  client = await UtcpClient.create({
    manual_call_templates: [{ name: 'fx', call_template_type: 'mcp', config: { mcpServers: { s: fixtureServer() } } }],
  });
  expect(client.initialRegistrations[0].errors).toEqual([]);
});

afterAll(() => client?.close());

it('maps results by default and returns the CallToolResult with raw: true', async () => {
  const tools = (await client.getTools()).map((t) => t.name);
  expect(tools).toContain('fx.s.fail');
  await expect(client.callTool('fx.s.fail', {})).rejects.toMatchObject({ code: 'TOOL_ERROR' });
  const raw = (await client.callTool('fx.s.fail', {}, { raw: true })) as { isError: boolean; content: unknown[] };
  expect(raw.isError).toBe(true);
  expect(raw.content).toEqual([
    { type: 'text', text: 'the widget is broken' },
    { type: 'text', text: 'try again later' },
  ]);
});
