/**
 * MCP servers that list defaulted properties as `required` (docs/design/manual-format.md#required-defaults): a call
 * without them is accepted, as the SDK clients accept it, and the server receives the schema's defaults. The server
 * is built with the v2 server SDK over stdio.
 */
import { join } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { FIXTURE_DIR } from '../fixtures/mcp/harness.js';

it('fills required properties that declare a default, and only those, before validating', async () => {
  const client = await UtcpClient.create({});
  onTestFinished(() => client.close());
  const r = await client.registerManual({
    name: 'pw',
    call_template_type: 'mcp',
    config: {
      mcpServers: { browser: { command: process.execPath, args: [join(FIXTURE_DIR, 'defaults-server.mjs')] } },
    },
  });
  expect(r.success, r.errors.join('; ')).toBe(true);
  const args = { options: { fullPage: true } };
  const sent = await client.callTool('pw.browser.screenshot', args);
  expect(sent).toEqual({ scale: 'css', type: 'png', options: { fullPage: true, quality: 80 } });
  expect(args, "the caller's object is not changed").toEqual({ options: { fullPage: true } });
  // A given value wins; a required property without a default is still required; a wrong value is still refused.
  expect(await client.callTool('pw.browser.screenshot', { scale: 'device' })).toMatchObject({
    scale: 'device',
    type: 'png',
  });
  await expect(client.callTool('pw.browser.screenshot', { scale: 'huge' })).rejects.toMatchObject({
    code: 'INVALID_ARGUMENTS',
  });
});
