/**
 * The security suites that attack the built package as an unprivileged user (uid 65534 when the suite runs as root)
 * start this same Node binary under that user. A Node installed under a private directory (nvm or npx under /root,
 * mode 0700) cannot be executed by that user: the spawn fails with EACCES, which those tests, waiting for the child's
 * report, would only show as a timeout a minute later. They check first and fail at once with the reason.
 */
import { spawnSync } from 'node:child_process';

const checked = new Set<string>();

/** Throws, naming the binary and what to do, when `uid`/`gid` cannot run `process.execPath` (checked once per pair). */
export function assertNodeRunsAs(uid: number, gid: number): void {
  if (checked.has(`${uid}:${gid}`)) return;
  const run = spawnSync(process.execPath, ['-e', ''], { uid, gid, cwd: '/', stdio: 'ignore', timeout: 30_000 });
  const why =
    run.error !== undefined
      ? ((run.error as NodeJS.ErrnoException).code ?? run.error.message)
      : run.status !== 0
        ? `exit status ${run.status ?? run.signal}`
        : undefined;
  if (why !== undefined) {
    throw new Error(
      `uid ${uid} cannot run this suite's Node binary ${process.execPath} (${why}); run the suite with a Node binary ` +
        'every user can execute (for example /usr/bin/node, or a copy under /opt) to test the unprivileged case',
    );
  }
  checked.add(`${uid}:${gid}`);
}
