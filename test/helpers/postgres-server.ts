/**
 * A real PostgreSQL server for tests: the distribution's binaries (Debian's `postgresql` package, which
 * .ci/run installs), a fresh cluster in a temp dir (initdb + pg_ctl), on a free port of 127.0.0.1, removed after.
 * As root the server runs as the `postgres` user (PostgreSQL refuses to run as root).
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TestPostgres {
  url: string;
  port: number;
  stop(): Promise<void>;
}

function findBinDir(): string {
  const candidates: string[] = [];
  for (const dir of (process.env.PATH ?? '').split(':')) candidates.push(dir);
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    for (const v of readdirSync(base).sort((a, b) => Number(b) - Number(a))) candidates.push(join(base, v, 'bin'));
  }
  for (const dir of candidates)
    if (dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir;
  throw new Error(
    'PostgreSQL server binaries (initdb, pg_ctl) not found on PATH or in /usr/lib/postgresql/*/bin. ' +
      'Install them with: apt-get install -y postgresql (.ci/run does this).',
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

async function userIds(name: string): Promise<{ uid: number; gid: number }> {
  const { stdout: uid } = await run('id', ['-u', name]);
  const { stdout: gid } = await run('id', ['-g', name]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

/** Starts a server; throws with initdb/pg_ctl's output when it cannot. */
/** `fsync: true` keeps the server's durable default (the benchmark); tests turn it off for speed. */
export async function startPostgres(options: { fsync?: boolean } = {}): Promise<TestPostgres> {
  const bin = findBinDir();
  const root = await mkdtemp(join(tmpdir(), 'utcp-pg-'));
  const data = join(root, 'data');
  const asRoot = process.getuid?.() === 0;
  let prefix: string[] = [];
  if (asRoot) {
    const ids = await userIds('postgres').catch(() => {
      throw new Error(
        'Running as root but there is no "postgres" user to run the server as (apt-get install -y postgresql creates it)',
      );
    });
    await chown(root, ids.uid, ids.gid);
    await chmod(root, 0o700);
    prefix = ['runuser', '-u', 'postgres', '--'];
  }
  const exec = (file: string, args: string[]) => {
    const [cmd, ...rest] = [...prefix, join(bin, file), ...args];
    return run(cmd, rest, { timeout: 120_000, env: { ...process.env, LC_ALL: 'C' } });
  };
  const port = await freePort();
  try {
    await exec('initdb', [
      '-D',
      data,
      '-U',
      'utcp',
      '--auth=trust',
      '--encoding=UTF8',
      ...(options.fsync ? [] : ['--no-sync']),
    ]);
    const opts = `-c listen_addresses=127.0.0.1 -p ${port} -k ${root} ${options.fsync ? '' : '-c fsync=off '}-c max_connections=50`;
    await exec('pg_ctl', ['start', '-w', '-t', '120', '-D', data, '-l', join(root, 'server.log'), '-o', opts]);
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; message: string };
    await rm(root, { recursive: true, force: true });
    throw new Error(`Could not start the test PostgreSQL server: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
  let stopped = false;
  return {
    url: `postgres://utcp@127.0.0.1:${port}/postgres`,
    port,
    async stop() {
      if (stopped) return;
      stopped = true;
      await exec('pg_ctl', ['stop', '-w', '-m', 'immediate', '-D', data]).catch(() => {});
      await rm(root, { recursive: true, force: true });
    },
  };
}
