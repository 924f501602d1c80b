/**
 * Threat model (docs/design/threat-model.md#file-race): a gRPC `proto_file` and its imports are confined to the
 * root by the file that was opened, not by a path check before opening. While another process swaps a directory
 * inside the root for a symlink to a directory outside (a bounded number of swaps), grpc manuals are registered
 * again and again through the public API, once with the proto file itself in the swapped directory and once with
 * an import there: each registration reads the inside files or fails with a typed error; no outside file is read.
 */
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UtcpClient } from './packed.js';
import { tempDir } from '../fixtures/cli/harness.js';

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

const service = (method: string) =>
  `syntax = "proto3";\npackage t;\nservice S { rpc ${method}(Req) returns (Req); }\nmessage Req { string s = 1; }\n`;
const types = (field: string) => `syntax = "proto3";\npackage t;\nmessage Req { string ${field} = 1; }\n`;
const MAIN = 'syntax = "proto3";\npackage t;\nimport "sub/types.proto";\nservice S { rpc Call(Req) returns (Req); }\n';

describe.skipIf(process.platform === 'win32')('gRPC proto_file confinement under a symlink race', () => {
  it('never reads a proto file or an import from outside the root', async () => {
    const base = await tempDir();
    const root = join(base, 'root');
    const outside = join(base, 'outside');
    await mkdir(join(root, 'sub'), { recursive: true });
    await mkdir(outside);
    await writeFile(join(root, 'main.proto'), MAIN);
    await writeFile(join(root, 'sub', 'svc.proto'), service('Inside'));
    await writeFile(join(root, 'sub', 'types.proto'), types('inside'));
    await writeFile(join(outside, 'svc.proto'), service('Leaked'));
    await writeFile(join(outside, 'types.proto'), types('leaked'));
    const client = await UtcpClient.create({}, { rootDir: root });
    const racer = spawn(process.execPath, ['-e', RACER, root, outside, '200000'], { stdio: 'ignore' });
    const racerDone = new Promise<number | null>((r) => racer.on('exit', (code) => r(code)));
    let inside = 0;
    let refused = 0;
    let running = true;
    racerDone.then(() => (running = false));
    try {
      // Until the racer is done, or enough rounds ran to have seen both outcomes (60 rounds = 960 registrations
      // while the swaps run): a work bound, so a loaded machine takes longer instead of failing a time bound.
      for (let round = 0; running && round < 400 && !(round >= 60 && inside > 0 && refused > 0); round++) {
        const results = await Promise.all(
          Array.from({ length: 16 }, (_, k) =>
            client.registerManual({
              name: `m${round}_${k}`,
              call_template_type: 'grpc',
              host: '127.0.0.1',
              port: 1,
              service_name: 't.S',
              proto_file: k % 2 === 0 ? 'sub/svc.proto' : 'main.proto',
            }),
          ),
        );
        for (const [k, r] of results.entries()) {
          const seen = JSON.stringify(r.manual.tools);
          expect(seen).not.toMatch(/leaked|Leaked/);
          if (r.success) {
            inside++;
            await client.deregisterManual(`m${round}_${k}`);
          } else {
            refused++;
            expect(r.errors.join(' ')).not.toMatch(/leaked|Leaked/);
          }
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
  }, 120_000);
});
