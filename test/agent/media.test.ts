/**
 * Images from tools reach each provider as its native image block: server-everything's get-tiny-image (a real MCP
 * server from npm) and a PNG served by a real HTTP tool (Content-Type: image/png) through the agent loop to the
 * replicas of the four APIs. Also user images, the size cap and the text fallback.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runAgent, userMessage } from '../../src/agent/index.js';
import { UtcpClient } from '../../src/index.js';
import { EVERYTHING_ENTRY } from '../fixtures/mcp/harness.js';
import { startLlmServer, type LlmServer } from './helpers/llm-server.js';
import { PROVIDERS, replyFor, type Provider } from './helpers/provider-replicas.js';
import { modelFor } from './helpers/provider-models.js';
import { json, startServer, type TestServer } from '../fixtures/http/server.js';

let client: UtcpClient;
let toolName: string;
let server: LlmServer | undefined;

beforeAll(async () => {
  client = await UtcpClient.create({
    manual_call_templates: [
      {
        name: 'ev',
        call_template_type: 'mcp',
        config: { mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'] } } },
      } as never,
    ],
  });
  const tool = (await client.getTools()).find((t) => t.name.endsWith('get-tiny-image'));
  if (!tool) throw new Error('server-everything has no get-tiny-image tool');
  toolName = tool.name;
}, 60_000);
afterAll(async () => {
  await client?.close();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The base64 PNG the model received, in each provider's shape, from the second request. */
function imageSent(provider: Provider, body: any): { mediaType: string; data: string } | undefined {
  switch (provider) {
    case 'anthropic': {
      const results = body.messages.at(-1).content.filter((b: any) => b.type === 'tool_result');
      const img = results
        .flatMap((r: any) => (Array.isArray(r.content) ? r.content : []))
        .find((b: any) => b.type === 'image');
      return img && { mediaType: img.source.media_type, data: img.source.data };
    }
    case 'openai': {
      // Tool messages take text only: the image follows in a user message.
      const last = body.messages.at(-1);
      if (last.role !== 'user' || body.messages.at(-2).role !== 'tool') return undefined;
      const part = last.content.find((p: any) => p.type === 'image_url');
      const m = /^data:([^;]+);base64,(.*)$/.exec(part?.image_url?.url ?? '');
      return m ? { mediaType: m[1], data: m[2] } : undefined;
    }
    case 'responses': {
      const out = body.input.find((i: any) => i.type === 'function_call_output');
      const part = Array.isArray(out?.output) ? out.output.find((p: any) => p.type === 'input_image') : undefined;
      const m = /^data:([^;]+);base64,(.*)$/.exec(part?.image_url ?? '');
      return m ? { mediaType: m[1], data: m[2] } : undefined;
    }
    case 'gemini': {
      const part = body.contents.at(-1).parts.find((p: any) => p.inlineData);
      return part && { mediaType: part.inlineData.mimeType, data: part.inlineData.data };
    }
  }
}

describe.each(PROVIDERS)('an MCP image reaches %s as an image block', (provider) => {
  it('get-tiny-image → native image, not base64 text', async () => {
    const encoded = toolName.replace('.', '__').replace(/[^a-zA-Z0-9_-]/g, '_');
    server = await startLlmServer([
      replyFor(provider, { calls: [{ id: 'call_img', name: encoded, args: {} }] }, false),
      replyFor(provider, { text: 'A tiny logo.' }, false),
    ]);
    const result = await runAgent({
      client,
      model: modelFor(provider, server.url, false),
      messages: [userMessage('Show me the image')],
      tools: [toolName],
    });
    expect(result.text).toBe('A tiny logo.');
    const sent = imageSent(provider, server.requests[1].body);
    expect(sent?.mediaType).toBe('image/png');
    expect(Buffer.from(sent!.data, 'base64').subarray(1, 4).toString('latin1')).toBe('PNG');
    // The text the model reads holds a placeholder, not kilobytes of base64.
    expect(JSON.stringify(server.requests[1].body).split(sent!.data).length - 1).toBe(1);
    expect(result.steps[0].toolResults[0].content).toContain('[image image/png');
  });

  it('falls back to a text note for a model that takes no images, and caps the size', async () => {
    const encoded = toolName.replace('.', '__').replace(/[^a-zA-Z0-9_-]/g, '_');
    server = await startLlmServer([
      replyFor(provider, { calls: [{ id: 'call_img', name: encoded, args: {} }] }, false),
      replyFor(provider, { text: 'ok' }, false),
    ]);
    await runAgent({
      client,
      model: modelFor(provider, server.url, false, { media: false }),
      messages: [userMessage('img')],
      tools: [toolName],
    });
    expect(imageSent(provider, server.requests[1].body)).toBeUndefined();
    expect(JSON.stringify(server.requests[1].body)).toContain('not shown: this model takes no images');

    await server.close();
    server = await startLlmServer([
      replyFor(provider, { calls: [{ id: 'call_img', name: encoded, args: {} }] }, false),
      replyFor(provider, { text: 'ok' }, false),
    ]);
    await runAgent({
      client,
      model: modelFor(provider, server.url, false, { maxMediaBytes: 100 }),
      messages: [userMessage('img')],
      tools: [toolName],
    });
    expect(imageSent(provider, server.requests[1].body)).toBeUndefined();
    expect(JSON.stringify(server.requests[1].body)).toContain('not shown: larger than 100 bytes');
  });

  it('sends an image in a user message', async () => {
    server = await startLlmServer([replyFor(provider, { text: 'A dot.' }, false)]);
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    await runAgent({
      client,
      model: modelFor(provider, server.url, false),
      messages: [userMessage('What is this?', [{ type: 'image', mediaType: 'image/png', data: png }])],
      tools: [],
    });
    const body = JSON.stringify(server.requests[0].body);
    expect(body).toContain(png);
    expect(body).toContain('What is this?');
  });
});

// ---------------------------------------------------------------- raw image bytes from an HTTP tool

/** A real 1×1 PNG, as bytes on the wire. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
// Binary bodies that are not valid UTF-8: a PDF with a binary comment line, and the start of a ZIP entry.
const PDF = Buffer.concat([
  Buffer.from('%PDF-1.7\n%'),
  Buffer.from([0xe2, 0xe3, 0xcf, 0xd3]),
  Buffer.from('\n%%EOF\n'),
]);
const ZIP = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x08, 0x00, 0xff, 0xfe, 0x00, 0x01]);
/** A short WAV header plus silence. */
const WAV = Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'), Buffer.alloc(28)]);

describe('raw image bytes from an HTTP tool', () => {
  let api: TestServer;
  let httpClient: UtcpClient;
  beforeAll(async () => {
    let base = '';
    api = await startServer((req, res) => {
      if (req.url === '/utcp') {
        const tool = (name: string, path: string) => ({
          name,
          description: `GET ${path}`,
          inputs: { type: 'object', properties: {} },
          outputs: {},
          tags: [],
          tool_call_template: { call_template_type: 'http', url: `${base}${path}`, http_method: 'GET' },
        });
        return json(res, {
          utcp_version: '1.0.1',
          manual_version: '1.0.0',
          tools: [
            tool('chart', '/chart.png'),
            tool('beep', '/beep.wav'),
            tool('logo', '/logo.svg'),
            tool('status', '/status'),
            tool('report', '/report.pdf'),
            tool('blob', '/blob'),
            tool('notes', '/notes'),
            tool('clip', '/clip.mp4'),
            tool('script', '/app.js'),
          ],
        });
      }
      const send = (type: string, body: string | Buffer) => {
        res.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
        res.end(body);
      };
      if (req.url === '/chart.png') return send('image/png', PNG);
      if (req.url === '/beep.wav') return send('audio/wav', WAV);
      if (req.url === '/logo.svg')
        return send('image/svg+xml; charset=utf-8', '<svg xmlns="http://www.w3.org/2000/svg"/>');
      if (req.url === '/status') return send('text/plain; charset=utf-8', 'all good');
      if (req.url === '/report.pdf') return send('application/pdf', PDF);
      if (req.url === '/blob') return send('application/octet-stream', ZIP);
      if (req.url === '/notes') return send('application/octet-stream', 'plain notes, mislabelled ✓');
      if (req.url === '/clip.mp4') return send('video/mp4', 'ftypisom');
      if (req.url === '/app.js') return send('application/javascript', 'export const a = 1;');
      json(res, {}, 404);
    });
    base = api.url;
    httpClient = await UtcpClient.create();
    const reg = await httpClient.registerManual({ name: 'pics', call_template_type: 'http', url: `${api.url}/utcp` });
    if (!reg.success) throw new Error(`registration failed: ${reg.errors.join('; ')}`);
  });
  afterAll(async () => {
    await httpClient?.close();
    await api?.close();
  });

  it('the http transport returns image/* and audio/* bodies as typed media results; text and SVG stay text', async () => {
    expect(await httpClient.callTool('pics.chart', {})).toEqual({
      type: 'image',
      mimeType: 'image/png',
      data: PNG.toString('base64'),
    });
    expect(await httpClient.callTool('pics.beep', {})).toEqual({
      type: 'audio',
      mimeType: 'audio/wav',
      data: WAV.toString('base64'),
    });
    expect(await httpClient.callTool('pics.logo', {})).toBe('<svg xmlns="http://www.w3.org/2000/svg"/>');
    expect(await httpClient.callTool('pics.status', {})).toBe('all good');
  });

  it('the http transport returns other binary bodies as base64 binary results, byte for byte; text stays text', async () => {
    expect(await httpClient.callTool('pics.report', {})).toEqual({
      type: 'binary',
      mimeType: 'application/pdf',
      data: PDF.toString('base64'),
    });
    expect(await httpClient.callTool('pics.blob', {})).toEqual({
      type: 'binary',
      mimeType: 'application/octet-stream',
      data: ZIP.toString('base64'),
    });
    expect(await httpClient.callTool('pics.clip', {})).toEqual({
      type: 'binary',
      mimeType: 'video/mp4',
      data: Buffer.from('ftypisom').toString('base64'),
    });
    // An unknown application/* type whose bytes are valid UTF-8 stays text (servers mislabel text as octet-stream).
    expect(await httpClient.callTool('pics.notes', {})).toBe('plain notes, mislabelled ✓');
    expect(await httpClient.callTool('pics.script', {})).toBe('export const a = 1;');
  });

  it.each(PROVIDERS)('a binary result reaches %s as a short note, never as base64', async (provider) => {
    server = await startLlmServer([
      replyFor(provider, { calls: [{ id: 'call_pdf', name: 'pics__report', args: {} }] }, false),
      replyFor(provider, { text: 'Got the report.' }, false),
    ]);
    const result = await runAgent({
      client: httpClient,
      model: modelFor(provider, server.url, false),
      messages: [userMessage('Fetch the report')],
      tools: ['pics.report'],
    });
    expect(result.text).toBe('Got the report.');
    expect(JSON.stringify(server.requests[1].body)).not.toContain(PDF.toString('base64'));
    expect(result.steps[0].toolResults[0].content).toBe(
      `[binary application/pdf, ${PDF.byteLength} bytes base64-decoded: not shown to the model]`,
    );
  });

  it.each(PROVIDERS)('the PNG reaches %s as its native image block', async (provider) => {
    server = await startLlmServer([
      replyFor(provider, { calls: [{ id: 'call_png', name: 'pics__chart', args: {} }] }, false),
      replyFor(provider, { text: 'A one-pixel chart.' }, false),
    ]);
    const result = await runAgent({
      client: httpClient,
      model: modelFor(provider, server.url, false),
      messages: [userMessage('Show me the chart')],
      tools: ['pics.chart'],
    });
    expect(result.text).toBe('A one-pixel chart.');
    const sent = imageSent(provider, server.requests[1].body);
    expect(sent).toEqual({ mediaType: 'image/png', data: PNG.toString('base64') });
    // Once, as the image; the tool result text holds only a placeholder.
    expect(JSON.stringify(server.requests[1].body).split(PNG.toString('base64')).length - 1).toBe(1);
    expect(result.steps[0].toolResults[0].content).toContain('[image image/png');
  });

  it.each(PROVIDERS)('with media off or over the cap, %s gets a text note instead', async (provider) => {
    for (const [extra, note] of [
      [{ media: false }, 'not shown: this model takes no images'],
      [{ maxMediaBytes: 10 }, 'not shown: larger than 10 bytes'],
    ] as const) {
      server = await startLlmServer([
        replyFor(provider, { calls: [{ id: 'call_png', name: 'pics__chart', args: {} }] }, false),
        replyFor(provider, { text: 'ok' }, false),
      ]);
      await runAgent({
        client: httpClient,
        model: modelFor(provider, server.url, false, extra),
        messages: [userMessage('chart')],
        tools: ['pics.chart'],
      });
      expect(imageSent(provider, server.requests[1].body)).toBeUndefined();
      expect(JSON.stringify(server.requests[1].body)).toContain(note);
      expect(JSON.stringify(server.requests[1].body)).not.toContain(PNG.toString('base64'));
      await server.close();
      server = undefined;
    }
  });
});
