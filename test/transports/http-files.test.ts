/**
 * Bytes on the wire (docs/design/transports.md#http-files): an OpenAPI multipart upload with a file, an array of files
 * and a text field, and an image/png body, converted and called through UtcpClient against a local server that
 * parses the multipart body with the fetch standard's own parser (Request.formData, undici) and checks every byte.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UtcpClient } from '../../src/index.js';

type Seen = { contentType: string; body: Buffer; url: string };
let server: ReturnType<typeof createServer>;
let base = '';
const seen: Seen[] = [];
let client: UtcpClient;

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000a49444154789c6300010000050001',
  'hex',
);
const ZIP = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0xff, 0x00, 0x80, 0xfe]);

const spec = () => ({
  openapi: '3.0.3',
  info: { title: 'files', version: '1' },
  servers: [{ url: base }],
  paths: {
    '/upload': {
      post: {
        operationId: 'upload',
        requestBody: {
          content: {
            'multipart/form-data': {
              schema: {
                type: 'object',
                properties: {
                  file: { type: 'string', format: 'binary' },
                  attachments: { type: 'array', items: { $ref: '#/components/schemas/Blob' } },
                  note: { type: 'string' },
                },
              },
            },
          },
        },
        responses: { '200': { description: 'ok' } },
      },
    },
    '/avatar': {
      put: {
        operationId: 'avatar',
        requestBody: { content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } },
        responses: { '200': { description: 'ok' } },
      },
    },
  },
  components: { schemas: { Blob: { type: 'string', format: 'binary' } } },
});

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ contentType: req.headers['content-type'] ?? '', body: Buffer.concat(chunks), url: req.url ?? '' });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = await UtcpClient.create({});
  const r = await client.registerManual({ name: 'files', call_template_type: 'text', content: JSON.stringify(spec()) });
  expect(r.success, r.errors.join('; ')).toBe(true);
});
afterAll(async () => {
  await client?.close();
  await new Promise<void>((r) => server.close(() => r()));
});

/** The multipart body as the fetch standard's parser reads it. */
async function parts(s: Seen): Promise<FormData> {
  return new Request(`${base}${s.url}`, {
    method: 'POST',
    headers: { 'content-type': s.contentType },
    body: new Uint8Array(s.body),
  }).formData();
}

describe('files and raw bodies', () => {
  it('sends multipart file parts with filename and type, one part per file of an array, text fields as text', async () => {
    await client.callTool('files.upload', {
      body: {
        file: { data: PNG.toString('base64'), filename: 'cat.png', content_type: 'image/png' },
        attachments: [
          ZIP.toString('base64'),
          { data: ZIP.toString('base64'), filename: 'b.zip', content_type: 'application/zip' },
        ],
        note: 'hello',
      },
    });
    const form = await parts(seen.at(-1)!);
    const file = form.get('file') as File;
    expect(file.name).toBe('cat.png');
    expect(file.type).toBe('image/png');
    expect(Buffer.from(await file.arrayBuffer()).equals(PNG)).toBe(true);
    const attachments = form.getAll('attachments') as File[];
    expect(attachments.map((f) => [f.name, f.type])).toEqual([
      ['attachments', 'application/octet-stream'],
      ['b.zip', 'application/zip'],
    ]);
    for (const f of attachments) expect(Buffer.from(await f.arrayBuffer()).equals(ZIP)).toBe(true);
    expect(form.get('note')).toBe('hello');
  });

  it('sends a binary body as its bytes, from base64 (models) or from a Buffer (in-process)', async () => {
    await client.callTool('files.avatar', { body: PNG.toString('base64') });
    expect(seen.at(-1)!.contentType).toBe('image/png');
    expect(seen.at(-1)!.body.equals(PNG)).toBe(true);
    await client.callTool('files.avatar', { body: PNG as unknown as string });
    expect(seen.at(-1)!.body.equals(PNG)).toBe(true);
  });

  it('refuses a file that is not base64 before anything is sent', async () => {
    const before = seen.length;
    await expect(client.callTool('files.avatar', { body: 'not base64!' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENTS',
      message: expect.stringContaining('base64'),
    });
    await expect(client.callTool('files.upload', { body: { file: { data: '%%%' } } })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENTS',
    });
    expect(seen.length).toBe(before);
  });

  it('records which fields are files and the binary body on the template', async () => {
    expect((await client.getTool('files.upload'))!.tool_call_template).toMatchObject({
      file_fields: ['file', 'attachments'],
    });
    expect((await client.getTool('files.avatar'))!.tool_call_template).toMatchObject({ body_encoding: 'base64' });
  });
});
