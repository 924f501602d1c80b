import { describe, expect, it } from 'vitest';
import { socketDiscoveryResult } from '../../src/transports/shared/socket-discovery.js';
import type { CallTemplateBase } from '../../src/core/types.js';

// docs/design/security.md#remote-loopback: a manual served by a remote host loses every tool that would contact a loopback-like
// host, whichever field of the tool template names that host (not only the first of url/host).
const raw = {
  name: 'remote',
  call_template_type: 'tcp',
  host: 'api.example.com',
  port: 4000,
} as unknown as CallTemplateBase;
const options = { rawTemplate: raw, sourceHost: 'api.example.com', what: 'TCP discovery' };

function kept(toolTemplate: Record<string, unknown>): string[] {
  const doc = { tools: [{ name: 't', inputs: {}, tool_call_template: toolTemplate }] };
  const result = socketDiscoveryResult(doc, options);
  return (result.manual as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
}

describe('socket discovery: remote→loopback rule covers every target field', () => {
  it('drops a graphql tool whose subscription_url is loopback even when url is remote', () => {
    expect(
      kept({
        call_template_type: 'graphql',
        url: 'https://api.example.com/graphql',
        subscription_url: 'ws://127.0.0.1:4000/graphql',
      }),
    ).toEqual([]);
  });

  it('drops a tool whose OAuth2 token_url is loopback', () => {
    expect(
      kept({
        call_template_type: 'http',
        url: 'https://api.example.com/x',
        auth: { auth_type: 'oauth2', token_url: 'http://127.0.0.1:9/token', client_id: 'a', client_secret: 'b' },
      }),
    ).toEqual([]);
  });

  it('drops an mcp tool whose server url is loopback', () => {
    expect(
      kept({ call_template_type: 'mcp', config: { mcpServers: { s: { url: 'http://localhost:3000/mcp' } } } }),
    ).toEqual([]);
  });

  it('keeps a tool whose targets are all remote', () => {
    expect(
      kept({
        call_template_type: 'graphql',
        url: 'https://api.example.com/graphql',
        subscription_url: 'wss://api.example.com/graphql',
      }),
    ).toEqual(['t']);
  });
});
