/**
 * Timeout, abort and close() kill the whole process group of a CLI call: no grandchild survives.
 * The fixture starts `sleep 1000 &`, publishes its pid in a file and blocks on `wait`.
 * These tests read the pids the shell prints, so they run without a PID namespace (the fallback containment);
 * test/security/process-namespace.test.ts covers calls inside one.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliExitError, UtcpAbortError, UtcpTimeoutError } from '../../src/core/errors.js';
import {
  cliTemplate,
  FIXTURES,
  isGone,
  makeHarness,
  sq,
  tempDir,
  waitForFile,
  waitUntilGone,
  caught,
} from '../fixtures/cli/harness.js';
import { pidsWithEnv } from '../helpers/host-processes.js';
import { pidNamespace } from '../../src/process/pid-namespace.js';

const namespace = await pidNamespace();

const spawnBackground = (pidFile: string, mode = '') =>
  cliTemplate(`bash ${sq(join(FIXTURES, 'spawn-background.sh'))} ${sq(pidFile)} ${mode}`);

describe('cli process groups', () => {
  it('abort kills the grandchild and rejects with UtcpAbortError', async () => {
    const dir = await tempDir();
    const h = makeHarness({ rootDir: dir, pidNamespaces: false });
    const controller = new AbortController();
    const call = h.call(spawnBackground(join(dir, 'pid')), {}, { signal: controller.signal });
    const pid = Number(await waitForFile(dir, 'pid'));
    expect(isGone(pid)).toBe(false);
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(UtcpAbortError);
    expect(await waitUntilGone(pid)).toBe(true);
  });

  it('the template timeout kills the grandchild and rejects with UtcpTimeoutError', async () => {
    const dir = await tempDir();
    const h = makeHarness({ rootDir: dir, pidNamespaces: false });
    const template = { ...spawnBackground(join(dir, 'pid')), timeout: 1500 };
    const call = h.call(template);
    call.catch(() => {});
    const pid = Number(await waitForFile(dir, 'pid'));
    const error = await caught(call);
    expect(error).toBeInstanceOf(UtcpTimeoutError);
    expect(error).toMatchObject({ code: 'TIMEOUT', timeoutMs: 1500 });
    expect(error.message).toContain('cli call demo.t');
    expect(await waitUntilGone(pid)).toBe(true);
  });

  it('a caller deadline (TimeoutError reason) becomes UtcpTimeoutError with the caller timeout', async () => {
    const dir = await tempDir();
    const h = makeHarness({ rootDir: dir, pidNamespaces: false });
    const controller = new AbortController();
    const call = h.call(spawnBackground(join(dir, 'pid')), {}, { signal: controller.signal, timeoutMs: 250 });
    const pid = Number(await waitForFile(dir, 'pid'));
    controller.abort(new DOMException('deadline', 'TimeoutError'));
    await expect(call).rejects.toMatchObject({ code: 'TIMEOUT', timeoutMs: 250 });
    expect(await waitUntilGone(pid)).toBe(true);
  });

  it('escalates to SIGKILL for a grandchild that ignores SIGTERM', async () => {
    const dir = await tempDir();
    const h = makeHarness({ rootDir: dir, pidNamespaces: false });
    const controller = new AbortController();
    const call = h.call(spawnBackground(join(dir, 'pid'), 'ignore-term'), {}, { signal: controller.signal });
    const pid = Number(await waitForFile(dir, 'pid'));
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(UtcpAbortError);
    expect(await waitUntilGone(pid, 8000)).toBe(true);
  });

  it('close() kills a running call and rejects it with CLIENT_CLOSED', async () => {
    const dir = await tempDir();
    const h = makeHarness({ rootDir: dir, pidNamespaces: false });
    const call = h.call(spawnBackground(join(dir, 'pid')));
    call.catch(() => {});
    const pid = Number(await waitForFile(dir, 'pid'));
    await h.transport.close();
    await expect(call).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
    expect(await waitUntilGone(pid)).toBe(true);
  });

  it('close() while a call is still being prepared (before its spawn) rejects it with CLIENT_CLOSED and runs nothing', async () => {
    const dir = await tempDir();
    const h = makeHarness({ rootDir: dir });
    // The call stops at its first await (before the shell starts); close() runs in that gap.
    const call = h.call(cliTemplate(`touch ${join(dir, 'ran')}; echo ran`));
    call.catch(() => {});
    await h.transport.close();
    await expect(call).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
    expect(existsSync(join(dir, 'ran'))).toBe(false);
  });

  it('close() kills background processes left behind by a finished call', async () => {
    const h = makeHarness({ pidNamespaces: false });
    const pid = Number(await h.call(cliTemplate('sleep 1000 >/dev/null 2>&1 & echo $!')));
    expect(isGone(pid)).toBe(false);
    await h.transport.close();
    expect(await waitUntilGone(pid)).toBe(true);
  });

  it.skipIf(namespace === undefined)(
    'in a PID namespace, background processes end with the call that started them',
    async () => {
      const h = makeHarness();
      const token = `t${Date.now()}${Math.random()}`;
      const template = cliTemplate('sleep 1000 >/dev/null 2>&1 & echo $!', { env_vars: { KILL_TEST_TOKEN: token } });
      const inner = Number(await h.call(template));
      expect(inner).toBeGreaterThan(1);
      // Nothing carrying the token is left once the call returned (without a namespace it lingers until close()).
      const left = pidsWithEnv(`KILL_TEST_TOKEN=${token}`).filter((pid) => !isGone(pid));
      for (const pid of left) process.kill(pid, 'SIGKILL');
      expect(left).toEqual([]);
    },
  );

  it('rejects at once without spawning when the signal is already aborted', async () => {
    const dir = await tempDir();
    const h = makeHarness({ rootDir: dir, pidNamespaces: false });
    const controller = new AbortController();
    controller.abort();
    await expect(h.call(cliTemplate('touch ran'), {}, { signal: controller.signal })).rejects.toBeInstanceOf(
      UtcpAbortError,
    );
    const { existsSync } = await import('node:fs');
    expect(existsSync(join(dir, 'ran'))).toBe(false);
  });

  it.each([
    ['in a PID namespace', true],
    ['without one', false],
  ])('reports a shell killed by a signal as a CliExitError with the signal (%s)', async (_, pidNamespaces) => {
    // Killed from outside, as the OOM killer would: inside a namespace the shell is its init, which ignores a
    // SIGKILL sent from within (docs/design/transports.md#cli-fast-path).
    const dir = await tempDir();
    const h = makeHarness({ rootDir: dir, pidNamespaces });
    const tag = `kill-${process.pid}-${Math.random().toString(36).slice(2)}`;
    const call = caught(
      // The shell waits in open() of a FIFO: no child of its own holds the output pipe once it is killed.
      h.call(
        cliTemplate('mkfifo f && touch ready && read -r _ < f', { env_vars: { UTCP_TEST_TAG: tag } }),
        {},
        {
          timeoutMs: 20_000,
        },
      ),
    );
    await waitForFile(dir, 'ready');
    const shells = pidsWithEnv(`UTCP_TEST_TAG=${tag}`).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'latin1').trim() === 'bash';
      } catch {
        return false;
      }
    });
    expect(shells).toHaveLength(1);
    process.kill(shells[0]!, 'SIGKILL');
    const error = await call;
    expect(error).toBeInstanceOf(CliExitError);
    expect(error).toMatchObject({ exitCode: null, signal: 'SIGKILL' });
  });

  it.each([
    ['in a PID namespace', true],
    ['without one', false],
  ])('reports an exit status above 128 as an exit code, not a signal (%s)', async (_, pidNamespaces) => {
    const h = makeHarness({ pidNamespaces });
    const error = await caught(h.call(cliTemplate('exit 143')));
    expect(error).toBeInstanceOf(CliExitError);
    expect(error).toMatchObject({ exitCode: 143, signal: null });
  });
});
