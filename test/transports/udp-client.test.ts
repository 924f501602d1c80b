import { describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { startUdpServer } from '../fixtures/sockets/udp-server.js';

describe('udp through UtcpClient', () => {
  it('registers by discovery, calls a tool with a text template and closes', async () => {
    const manual = {
      utcp_version: '1.0.0',
      manual_version: '1.0.0',
      tools: [
        {
          name: 'status',
          description: 'Device status',
          inputs: { type: 'object', properties: { device: { type: 'string' } } },
        },
      ],
    };
    const server = await startUdpServer((data, from, srv) => {
      const text = data.toString();
      void srv.reply(text === 'DISCOVER' ? JSON.stringify(manual) : JSON.stringify({ request: text, ok: true }), from);
    });
    onTestFinished(() => server.close());
    const client = await UtcpClient.create();
    onTestFinished(() => client.close());

    const result = await client.registerManual({
      name: 'devices',
      call_template_type: 'udp',
      host: '127.0.0.1',
      port: server.port,
      discovery_message: 'DISCOVER',
      request_data_format: 'text',
      request_data_template: 'STATUS UTCP_ARG_device_UTCP_ARG',
      timeout: 5000,
    });
    expect(result.errors).toEqual([]);
    expect(await client.callTool('devices.status', { device: 'lamp-1' })).toEqual({
      request: 'STATUS lamp-1',
      ok: true,
    });
    expect(server.received.map((d) => d.data.toString())).toEqual(['DISCOVER', 'STATUS lamp-1']);
    await client.close();
  });
});
