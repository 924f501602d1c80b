/**
 * Threat model (docs/design/threat-model.md#process-trees): a CLI tool whose children leave the
 * process group (`setsid`, a daemon's double fork) cannot outlive `close()`, nor a call's abort.
 * Through the public API: a manual with cli tools, a real bash, real `setsid`.
 * These tests cover the fallback containment (process group and marker, `pidNamespaces: false`), whose pids the
 * shell prints are ours; test/security/process-namespace.test.ts covers the PID namespace.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UtcpClient } from './packed.js';
import { isGone, tempDir, waitForFile, waitUntilGone } from '../fixtures/cli/harness.js';

const hasSetsid = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v setsid']).length > 0;
  } catch {
    return false;
  }
})();

async function clientWith(commands: string[]): Promise<UtcpClient> {
  const dir = await tempDir();
  const client = await UtcpClient.create({}, { rootDir: dir, pidNamespaces: false });
  const tools = [
    {
      name: 't',
      description: 'escapes',
      inputs: { type: 'object', properties: {} },
      tool_call_template: { call_template_type: 'cli', commands: commands.map((command) => ({ command })) },
    },
  ];
  const r = await client.registerManual({
    name: 'm',
    call_template_type: 'text',
    content: JSON.stringify({ tools }),
    allowed_communication_protocols: ['cli'],
  });
  expect(r.errors).toEqual([]);
  return client;
}

/** The pid of a `sleep` started in a new session by a double fork: its parent is gone, it is in no group of ours. */
const escapeGroup = "setsid sh -c 'sleep 1000 >/dev/null 2>&1 </dev/null & echo $!' </dev/null";

describe.skipIf(process.platform !== 'linux' || !hasSetsid)('cli: children that leave the process group', () => {
  it('close() kills a setsid grandchild left behind by a finished call', async () => {
    const client = await clientWith([escapeGroup]);
    const pid = Number(await client.callTool('m.t', {}));
    expect(pid).toBeGreaterThan(1);
    expect(isGone(pid)).toBe(false);
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const [, , pgrp, session] = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    expect(pgrp).toBe(session); // its own session and group: a group kill alone would miss it
    await client.close();
    expect(await waitUntilGone(pid)).toBe(true);
  });

  it('abort of a running call kills a setsid grandchild too', async () => {
    const dir = await tempDir();
    const client = await clientWith([
      `p=$(${escapeGroup}); echo $p > ${dir}/pid.tmp; mv ${dir}/pid.tmp ${dir}/pid; sleep 1000`,
    ]);
    const controller = new AbortController();
    const call = client.callTool('m.t', {}, { signal: controller.signal });
    call.catch(() => {});
    const pid = Number((await waitForFile(dir, 'pid')).trim());
    expect(isGone(pid)).toBe(false);
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'ABORTED' });
    expect(await waitUntilGone(pid)).toBe(true);
    await client.close();
  });
});
