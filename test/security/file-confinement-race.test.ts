/**
 * Threat model (docs/design/threat-model.md#file-race): file-root confinement cannot be raced. While another
 * process swaps a directory inside the root for a symlink to a directory outside it (a bounded number of
 * swaps), file manuals are registered again and again through the public API: each registration either
 * reads the inside manual or fails with a typed error; the outside manual is never read.
 */
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UtcpClient } from './packed.js';
import { tempDir } from '../fixtures/cli/harness.js';

const manual = (name: string) =>
  JSON.stringify({
    utcp_version: '1.0.1',
    manual_version: '1.0.0',
    tools: [
      {
        name,
        description: name,
        inputs: { type: 'object', properties: {} },
        tool_call_template: { call_template_type: 'text', content: '{}' },
      },
    ],
  });

const RACER = `
const fs = require('node:fs');
const [root, outside, count] = process.argv.slice(1);
const sub = root + '/sub', real = root + '/sub.real', link = root + '/sub.link';
fs.symlinkSync(outside, link);
for (let i = 0; i < Number(count); i++) {
  fs.renameSync(sub, real); // the directory steps aside...
  fs.renameSync(link, sub); // ...and a symlink to the outside takes its name
  fs.renameSync(sub, link);
  fs.renameSync(real, sub);
}
`;

describe.skipIf(process.platform === 'win32')('file confinement under a symlink race', () => {
  it('never reads the file outside the root', async () => {
    const base = await tempDir();
    const root = join(base, 'root');
    const outside = join(base, 'outside');
    await mkdir(join(root, 'sub'), { recursive: true });
    await mkdir(outside);
    await writeFile(join(root, 'sub', 'manual.json'), manual('inside'));
    await writeFile(join(outside, 'manual.json'), manual('leaked'));
    const client = await UtcpClient.create({}, { rootDir: root });
    const racer = spawn(process.execPath, ['-e', RACER, root, outside, '200000'], { stdio: 'ignore' });
    const racerDone = new Promise<number | null>((r) => racer.on('exit', (code) => r(code)));
    let inside = 0;
    let refused = 0;
    let running = true;
    racerDone.then(() => (running = false));
    try {
      // 16 registrations at a time, so that opens land in every phase of the swap.
      for (let round = 0; running && round < 400; round++) {
        const results = await Promise.all(
          Array.from({ length: 16 }, (_, k) =>
            client.registerManual({ name: `m${round}_${k}`, call_template_type: 'file', file_path: 'sub/manual.json' }),
          ),
        );
        for (const [k, r] of results.entries()) {
          const names = r.manual.tools.map((t) => t.name);
          expect(names.some((n) => n.endsWith('leaked'))).toBe(false);
          if (r.success) inside++;
          else refused++;
          if (r.success) await client.deregisterManual(`m${round}_${k}`);
        }
      }
    } finally {
      racer.kill();
      await racerDone;
      await client.close();
    }
    expect(inside + refused).toBeGreaterThan(100);
    expect(inside).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0); // the race was exercised: some opens met the symlink
  });
});
