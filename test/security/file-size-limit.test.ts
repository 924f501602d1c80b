import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFileTransport } from '../../src/transports/file/index.js';
import { createTestContext } from '../helpers/context.js';

// docs/design/security.md#limits: the document size limit is checked before reading. A sparse 3 GiB file costs no
// disk space; reading it whole would allocate gigabytes (and fail with a generic I/O error).
describe('file transport: size limit before reading', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'utcp-sec-file-'));
    const handle = await open(join(dir, 'huge.json'), 'w');
    await handle.truncate(3 * 1024 ** 3);
    await handle.close();
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('rejects a file above max_document_bytes with RESPONSE_TOO_LARGE without reading it', async () => {
    const transport = createFileTransport(createTestContext({ rootDir: dir }));
    const template = { name: 'm', call_template_type: 'file', file_path: 'huge.json' } as never;
    await expect(
      transport.registerManual(template, {
        signal: new AbortController().signal,
        manualName: 'm',
        rawTemplate: template,
      } as never),
    ).rejects.toMatchObject({ code: 'RESPONSE_TOO_LARGE' });
  });
});
