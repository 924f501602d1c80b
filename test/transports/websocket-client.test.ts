import { describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { answerEach, startWsServer } from '../fixtures/sockets/ws-server.js';

describe('websocket through UtcpClient', () => {
  it('registers by discovery, calls and streams a tool with a substituted secret, stores the raw template, and closes', async () => {
    const manual = {
      utcp_version: '1.0.0',
      manual_version: '1.0.0',
      tools: [
        {
          name: 'echo',
          description: 'Echoes its input',
          inputs: { type: 'object', properties: { text: { type: 'string' } } },
        },
      ],
    };
    const server = await startWsServer((peer) =>
      answerEach(peer, (m) => {
        const msg = JSON.parse(m);
        if (msg.type === 'utcp') return JSON.stringify(manual);
        if (msg.stream) {
          peer.ws.send(JSON.stringify({ chunk: 1 }));
          peer.ws.send(JSON.stringify({ chunk: 2 }));
          return '{"type":"complete"}';
        }
        return JSON.stringify({ type: 'tool_response', result: { echoed: msg.text } });
      }),
    );
    onTestFinished(() => server.close());
    const client = await UtcpClient.create({ variables: { demo_TOKEN: 's3cret' } });
    onTestFinished(() => client.close());

    const result = await client.registerManual({
      name: 'demo',
      call_template_type: 'websocket',
      url: `${server.url}/ws`,
      headers: { 'X-Token': '${TOKEN}' },
      timeout: 5,
    });
    expect(result.errors).toEqual([]);
    expect(result.success).toBe(true);
    expect(await client.callTool('demo.echo', { text: 'hi' })).toEqual({ echoed: 'hi' });
    const streamed: unknown[] = [];
    for await (const item of client.callToolStreaming('demo.echo', { stream: true } as Record<string, unknown>))
      streamed.push(item);
    expect(streamed).toEqual([{ chunk: 1 }, { chunk: 2 }]);

    expect(server.peers).toHaveLength(1); // discovery and calls share the pooled connection
    expect(server.peers[0].request.headers['x-token']).toBe('s3cret');
    const stored = await client.getTool('demo.echo');
    expect(JSON.stringify(stored)).not.toContain('s3cret');
    expect((stored!.tool_call_template as unknown as { headers: Record<string, string> }).headers['X-Token']).toBe(
      '${TOKEN}',
    );

    await client.close();
    await server.peers[0].closed;
  });
});
