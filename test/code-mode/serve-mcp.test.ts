/** `code_mode.run` served over MCP (`serveMcp`) and called by the official MCP client, like any tool. */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { registerCodeMode } from '../../src/code-mode/index.js';
import { serveMcp } from '../../src/mcp/serve-mcp.js';

it('an MCP client runs a script through code_mode.run; a failing script is an MCP tool error', async () => {
  const client = await UtcpClient.create({});
  onTestFinished(() => client.close());
  await client.registerFunctions('city', [
    {
      name: 'population',
      inputs: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      handler: ({ name }) => ({ name, population: String(name).length * 1000 }),
    },
  ]);
  await registerCodeMode(client);
  const handle = await serveMcp(client, { transport: 'http' });
  onTestFinished(() => handle.close());
  const mcp = new Client({ name: 'code-mode-test', version: '1.0.0' });
  onTestFinished(() => mcp.close());
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(handle.url!), {
      requestInit: { headers: { authorization: `Bearer ${handle.token}` } },
    }),
  );
  const names = (await mcp.listTools()).tools.map((t) => t.name);
  expect(names).toEqual(expect.arrayContaining(['city.population', 'code_mode.run', 'code_mode.describe']));
  const code = `
    const rows = await Promise.all(['Oslo', 'Lima', 'Paris'].map((name) => city.population({ name })));
    console.log(rows.length, 'cities');
    return rows.reduce((sum, r) => sum + r.population, 0);
  `;
  const result = await mcp.callTool({ name: 'code_mode.run', arguments: { code } });
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toMatchObject({ result: 13000, logs: ['3 cities'] });
  const failed = await mcp.callTool({ name: 'code_mode.run', arguments: { code: 'while (true) {}', timeoutMs: 200 } });
  expect(failed.isError).toBe(true);
  expect(JSON.stringify(failed.content)).toContain('deadline');
}, 30_000);
