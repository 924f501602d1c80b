/**
 * Threat model (docs/design/threat-model.md#sandbox-kernel): what a model-written `bash` command may try against
 * the kernel sandbox, run through the built package (dist/tools) in a child process, as root (when the suite runs
 * as root) and as an unprivileged user (uid 65534, owning its workspace). The kernel must say no: no capability,
 * no UNIX socket, no writable git control file, no process left, and no unsandboxed run unless opted in by name.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import {
  chmod,
  chown,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { assertNodeRunsAs } from '../helpers/unprivileged.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/security/sandbox-attacker.mjs', import.meta.url));
const RUN_DEADLINE_MS = 45_000;
const TEST_TIMEOUT_MS = 60_000;
const SECRET = `s3cret${randomBytes(6).toString('hex')}`;
/** A host directory outside the workspace, visible read-only inside (the host's /tmp is replaced by a tmpfs). */
const HOST_DIR = '/var/tmp';

const isRoot = process.getuid?.() === 0;
const users = isRoot
  ? [
      { label: 'root', uid: 0, gid: 0 },
      { label: 'uid 65534', uid: 65534, gid: 65534 },
    ]
  : [{ label: `uid ${process.getuid?.()}`, uid: process.getuid!(), gid: process.getgid!() }];
type User = (typeof users)[number];

const bwrapWorks =
  process.platform === 'linux' &&
  existsSync(HOST_DIR) &&
  spawnSync('bwrap', ['--unshare-user', '--cap-drop', 'ALL', '--ro-bind', '/', '/', 'true']).status === 0;
if (!bwrapWorks) process.stderr.write('[security] sandbox-kernel skipped: bubblewrap does not run here\n');

interface Outcome {
  registration: { sandbox?: string; sandboxReason?: string; error?: { name: string; code: string; message: string } };
  results: { value?: unknown; error?: { message: string } }[];
}
type Step = Record<string, unknown>;

/** A temp directory owned by `user` (removed after the test). */
async function ownedDir(user: User, parent = tmpdir()): Promise<string> {
  const dir = await realpath(await mkdtemp(join(parent, 'utcp-sbx-')));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  await chown(dir, user.uid, user.gid);
  return dir;
}

async function chownTree(path: string, user: User): Promise<void> {
  await chown(path, user.uid, user.gid);
  for (const entry of await readdir(path, { withFileTypes: true }))
    if (entry.isDirectory()) await chownTree(join(path, entry.name), user);
    else if (!entry.isSymbolicLink()) await chown(join(path, entry.name), user.uid, user.gid);
}

/** Runs the attacker fixture as `user` on workspace `root`: the host process holds SECRET in its environment. */
function attack(user: User, root: string, options: Record<string, unknown>, steps: Step[]): Promise<Outcome> {
  assertNodeRunsAs(user.uid, user.gid);
  const child = spawn(process.execPath, [FIXTURE, JSON.stringify({ root, options, steps })], {
    cwd: root,
    uid: user.uid,
    gid: user.gid,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: root, UTCP_HOST_SECRET: SECRET },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the attacker did not finish within ${RUN_DEADLINE_MS} ms; stderr: ${stderr}`));
    }, RUN_DEADLINE_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      try {
        expect(code, stderr).toBe(0); // the host process stayed alive and answered to the end
        resolve(JSON.parse(stdout) as Outcome);
      } catch (error) {
        reject(error);
      }
    });
  });
}

/** Runs the attacker until it prints its first line, then kills it with SIGKILL (a host that crashes). */
function attackThenCrash(user: User, root: string, options: Record<string, unknown>, steps: Step[]): Promise<Outcome> {
  assertNodeRunsAs(user.uid, user.gid);
  const child = spawn(process.execPath, [FIXTURE, JSON.stringify({ root, options, steps })], {
    cwd: root,
    uid: user.uid,
    gid: user.gid,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the attacker printed nothing within ${RUN_DEADLINE_MS} ms; stderr: ${stderr}`));
    }, RUN_DEADLINE_MS);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (!stdout.includes('\n')) return;
      clearTimeout(timer);
      child.kill('SIGKILL');
      child.once('close', () => resolve(JSON.parse(stdout.slice(0, stdout.indexOf('\n'))) as Outcome));
    });
  });
}

/** Live pids whose command line contains `text`, once none is left or after `waitMs`. */
async function survivors(text: string, waitMs: number): Promise<number[]> {
  const scan = () => {
    const found: number[] = [];
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        if (/^\S+ \(.*\) [ZX] /s.test(readFileSync(`/proc/${name}/stat`, 'latin1'))) continue;
        if (readFileSync(`/proc/${name}/cmdline`, 'latin1').includes(text)) found.push(Number(name));
      } catch {
        // gone
      }
    }
    return found;
  };
  const deadline = Date.now() + waitMs;
  let pids = scan();
  while (pids.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    pids = scan();
  }
  return pids;
}

/** The text of each step's result (a tool's error message for a failed call). */
function texts(outcome: Outcome): string[] {
  expect(outcome.registration.error).toBeUndefined();
  return outcome.results.map((r) => (r.error ? `ERROR ${r.error.message}` : String(r.value)));
}

function listen(server: Server, at: string | number): Promise<void> {
  return new Promise((resolve) =>
    typeof at === 'number' ? server.listen(at, '127.0.0.1', resolve) : server.listen(at, resolve),
  );
}

/**
 * A minimal static x86_64 ELF whose `code` runs at its entry point, then exits with eax as its status. Used to make
 * syscalls the way no compiler on the host would (i386 `int 0x80`, x32 numbers) without a 32-bit toolchain.
 */
function elfX64(code: number[]): Buffer {
  const base = 0x400000;
  const codeAt = 64 + 56; // after the ELF header and one program header
  const exitWithEax = [0x89, 0xc7, 0xb8, 60, 0, 0, 0, 0x0f, 0x05]; // mov edi, eax; mov eax, 60 (exit); syscall
  const b = Buffer.alloc(codeAt + code.length + exitWithEax.length);
  b.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0], 0); // ELF, 64-bit, little-endian, version 1, System V
  b.writeUInt16LE(2, 16); // ET_EXEC
  b.writeUInt16LE(0x3e, 18); // EM_X86_64
  b.writeUInt32LE(1, 20);
  b.writeBigUInt64LE(BigInt(base + codeAt), 24); // entry
  b.writeBigUInt64LE(64n, 32); // program headers at 64
  b.writeUInt16LE(64, 52);
  b.writeUInt16LE(56, 54);
  b.writeUInt16LE(1, 56);
  b.writeUInt32LE(1, 64); // PT_LOAD of the whole file, read + execute
  b.writeUInt32LE(5, 68);
  b.writeBigUInt64LE(BigInt(base), 80);
  b.writeBigUInt64LE(BigInt(base), 88);
  b.writeBigUInt64LE(BigInt(b.length), 96);
  b.writeBigUInt64LE(BigInt(b.length), 104);
  b.writeBigUInt64LE(0x1000n, 112);
  b.set([...code, ...exitWithEax], codeAt);
  return b;
}

describe.skipIf(!bwrapWorks)('the kernel sandbox of bash, attacked from inside', () => {
  let tcp: Server;
  let tcpPort = 0;
  let unixServer: Server;
  let abstractServer: Server;
  let socketDir: string;
  let unixPath: string;
  const abstractName = `\0utcp-sbx-${process.pid}-${randomBytes(4).toString('hex')}`;
  let connections = 0;

  beforeAll(async () => {
    const count = (socket: import('node:net').Socket) => {
      connections++;
      socket.on('error', () => undefined); // the probes hang up at once
      socket.end('hello\n');
    };
    tcp = createServer(count);
    await listen(tcp, 0);
    tcpPort = (tcp.address() as { port: number }).port;
    // A filesystem UNIX socket any user may connect to (like /var/run/docker.sock to its group): only the
    // sandbox's seccomp filter stands between the command and it.
    socketDir = await mkdtemp(join(HOST_DIR, 'utcp-sbx-sock-'));
    await chmod(socketDir, 0o755);
    unixPath = join(socketDir, 'service.sock');
    unixServer = createServer(count);
    await listen(unixServer, unixPath);
    await chmod(unixPath, 0o777);
    abstractServer = createServer(count);
    await listen(abstractServer, abstractName);
  });
  afterAll(async () => {
    for (const s of [tcp, unixServer, abstractServer])
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    if (socketDir) await rm(socketDir, { recursive: true, force: true });
  });

  describe.each(users)('as $label', (user) => {
    it(
      'gives root no capability back: no remount, no umount of /proc, no sysctl, no host environment, no host network',
      async () => {
        const root = await ownedDir(user);
        const outside = await ownedDir(user, HOST_DIR);
        await chmod(outside, 0o777);
        const before = connections;
        // Also with a bwrap older than 0.8.0, which has no --disable-userns (a wrapper that refuses the option).
        const legacy = join(await ownedDir(user), 'bwrap-0.7');
        await writeFile(
          legacy,
          '#!/bin/sh\nfor a; do [ "$a" = --disable-userns ] && { echo "bwrap: Unknown option $a" >&2; exit 1; }; done\nexec bwrap "$@"\n',
          { mode: 0o755 },
        );
        for (const bwrapPath of [undefined, legacy]) {
          const outcome = await attack(user, root, { sandbox: 'bwrap', bwrapPath }, [
            {
              call: 'bash',
              args: {
                command: `id -u; mount -o remount,rw / && echo REMOUNTED; echo pwned > ${outside}/escaped && echo WROTE-OUTSIDE; true`,
              },
            },
            {
              call: 'bash',
              args: {
                command: [
                  'umount -l /proc && echo UMOUNTED',
                  // Sysctls check the writer's uid only: kernel.core_pattern would run a program as root on the host.
                  // The same value is written back, to a harmless one, so an unfixed sandbox changes nothing.
                  'v=$(cat /proc/sys/kernel/printk_ratelimit) && echo "$v" > /proc/sys/kernel/printk_ratelimit && echo SYSCTL-WRITTEN',
                  `unshare -Urpf --mount-proc sh -c 'echo "$(cat /proc/sys/kernel/printk_ratelimit)" > /proc/sys/kernel/printk_ratelimit && echo NESTED-SYSCTL'`,
                  "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -a UTCP_HOST_SECRET",
                  `for f in /proc/[0-9]*/ns/net; do nsenter --net=$f bash -c 'exec 3<>/dev/tcp/127.0.0.1/${tcpPort} && echo NET-REACHED' 2>/dev/null && break; done`,
                  // A nested user namespace has every capability over itself, none over the sandbox's locked mounts.
                  `unshare -Urm sh -c 'umount -l /proc && echo NESTED-UMOUNTED; mount -o remount,rw / && echo NESTED-REMOUNTED; echo pwned > ${outside}/nested && echo NESTED-WROTE'`,
                  'true',
                ].join('; '),
              },
            },
          ]);
          const [identity, breakout] = texts(outcome);
          expect(outcome.registration.sandbox).toBe('bwrap');
          // What stays: the command runs as the host uid (mapped), so it reads what that uid may read, read-only.
          expect(identity).toMatch(new RegExp(`^${user.uid}\\n`));
          for (const marker of [
            'REMOUNTED',
            'WROTE-OUTSIDE',
            'UMOUNTED',
            'SYSCTL-WRITTEN',
            'NET-REACHED',
            'NESTED-',
            SECRET,
          ])
            expect(`${identity}${breakout}`).not.toContain(marker);
          expect(existsSync(join(outside, 'escaped'))).toBe(false);
          expect(existsSync(join(outside, 'nested'))).toBe(false);
          expect(connections).toBe(before);
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'reaches no UNIX socket (filesystem or abstract), no io_uring, no keyring, with or without the network',
      async () => {
        const root = await ownedDir(user);
        await writeFile(
          join(root, 'connect.cjs'),
          [
            "const at = process.argv[2].startsWith('@') ? `\\0${process.argv[2].slice(1)}` : process.argv[2];",
            "const s = require('node:net').connect(at);",
            "s.on('connect', () => { console.log('UNIX-CONNECTED'); s.destroy(); });",
            "s.on('error', (e) => console.log(`unix refused: ${e.code}`));",
          ].join('\n'),
        );
        await chownTree(root, user);
        const abstract = `@${abstractName.slice(1)}`;
        // This test's own Node, not the first on PATH: a Node 20 client does not reach a Node 24 server's abstract
        // socket of the same name, nor the reverse (tried), so with another Node first on PATH the control below would
        // fail for that reason alone.
        const node = `'${process.execPath.replaceAll("'", "'\\''")}'`;
        const probes = [
          `${node} connect.cjs ${unixPath}`,
          `${node} connect.cjs ${abstract}`,
          `perl -MSocket -e 'print socketpair(my $a, my $b, AF_UNIX, SOCK_DGRAM, 0) ? "DGRAM-PAIR\\n" : "dgram pair refused: $!\\n"; print socketpair(my $c, my $d, AF_UNIX, SOCK_STREAM, 0) ? "stream pair ok\\n" : "stream pair refused: $!\\n"'`,
          `perl -e '$p = "\\0" x 120; print syscall(425, 8, $p) < 0 ? "io_uring refused: $!\\n" : "IO-URING\\n"'`,
          // keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, create): the host's session keyring is inherited.
          `perl -e 'my $n = { x64 => 250, arm64 => 219 }->{"${process.arch}"}; print syscall($n, 0, -3, 1) < 0 ? "keyring refused: $!\\n" : "KEYRING\\n"'`,
          `node -e "require('node:net').connect(${tcpPort}, '127.0.0.1').on('connect', () => { console.log('tcp ok'); process.exit(0); }).on('error', (e) => console.log('tcp refused', e.code))"`,
        ];
        const steps = probes.map((command) => ({ call: 'bash', args: { command } }));
        const before = connections;
        for (const network of [false, true]) {
          const out = texts(await attack(user, root, { sandbox: 'bwrap', network }, steps)).join('\n');
          expect(out).not.toContain('UNIX-CONNECTED');
          expect(out).toContain(`unix refused: EAFNOSUPPORT`);
          expect(out).not.toContain('DGRAM-PAIR');
          expect(out).toContain('stream pair ok'); // socketpair stream sockets reach nothing and stay allowed
          expect(out).not.toContain('IO-URING');
          expect(out).toContain('io_uring refused');
          expect(out).not.toContain('KEYRING');
          expect(out).toContain('keyring refused: Function not implemented');
          expect(out).toContain(network ? 'tcp ok' : 'tcp refused'); // IP sockets still follow `network`
        }
        expect(connections).toBe(before + 1); // the one TCP connection of network: true
        // Control: the same probes without a sandbox (opted in) reach both sockets, so the test can fail.
        const control = texts(
          await attack(user, root, { sandbox: 'none', dangerouslyRunUnsandboxed: true }, steps.slice(0, 2)),
        );
        expect(control.join('\n').match(/UNIX-CONNECTED/g)).toHaveLength(2);
      },
      TEST_TIMEOUT_MS,
    );

    it.skipIf(process.arch !== 'x64')(
      "kills a syscall made in another architecture's convention (i386 int 0x80), refuses x32",
      async () => {
        const root = await ownedDir(user);
        // i386 syscall 60 is umask (x86_64's 60 is exit): the filter must not read it with x86_64 numbers.
        await writeFile(join(root, 'i386-call'), elfX64([0xbb, 0o22, 0, 0, 0, 0xb8, 60, 0, 0, 0, 0xcd, 0x80]), {
          mode: 0o755,
        });
        // x32 getpid (39 | 0x40000000) through the 64-bit syscall instruction.
        await writeFile(join(root, 'x32-call'), elfX64([0xb8, 39, 0, 0, 0x40, 0x0f, 0x05]), { mode: 0o755 });
        await chownTree(root, user);
        const command = './i386-call; echo "i386 status $?"; ./x32-call; echo "x32 status $?"';
        const [sandboxed] = texts(
          await attack(user, root, { sandbox: 'bwrap' }, [{ call: 'bash', args: { command } }]),
        );
        expect(sandboxed).toContain('i386 status 159'); // 128 + SIGSYS: killed by the filter
        expect(sandboxed).toContain('x32 status 218'); // -ENOSYS as the exit status
        // Control: without the filter the i386 call runs (umask returns the old mask, 18).
        const [control] = texts(
          await attack(user, root, { sandbox: 'none', dangerouslyRunUnsandboxed: true }, [
            { call: 'bash', args: { command } },
          ]),
        );
        expect(control).toContain('i386 status 18\n');
      },
      TEST_TIMEOUT_MS,
    );

    it(
      "writes no setuid or setgid file into the workspace (a root host's would be setuid root on the host)",
      async () => {
        const root = await ownedDir(user);
        const command = [
          'cp /bin/true chmodded && chmod u+s chmodded; chmod g+s chmodded; chmod 6755 chmodded',
          `perl -e 'sysopen(my $f, "created", 0101, 06755) or print "create refused: $!\\n"'`,
          `perl -e 'my $p = "made"; syscall(${process.arch === 'x64' ? 133 : 33}, ${process.arch === 'x64' ? '' : '-100, '}$p, 0100000 | 06755, 0) < 0 and print "mknod refused: $!\\n"'`,
          'chmod 0700 chmodded && echo PLAIN-CHMOD-OK',
          'true',
        ].join('; ');
        const modes = async () => {
          const found: Record<string, number> = {};
          for (const name of await readdir(root)) found[name] = (await stat(join(root, name))).mode & 0o6000;
          return found;
        };
        const [out] = texts(await attack(user, root, { sandbox: 'bwrap' }, [{ call: 'bash', args: { command } }]));
        expect(out).toContain('PLAIN-CHMOD-OK'); // ordinary modes still work
        expect(out).toContain('create refused: Operation not permitted');
        expect(out).toContain('mknod refused: Operation not permitted');
        expect(Object.values(await modes()).every((bits) => bits === 0)).toBe(true);
        // Control: without the sandbox the same commands leave setuid files behind.
        await rm(join(root, 'chmodded'), { force: true });
        await attack(user, root, { sandbox: 'none', dangerouslyRunUnsandboxed: true }, [
          { call: 'bash', args: { command: command.replace('; chmod 0700 chmodded && echo PLAIN-CHMOD-OK', '') } },
        ]);
        expect(Object.values(await modes()).some((bits) => bits !== 0)).toBe(true);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'cannot write the git control files of the workspace: .git directory, .git file, missing .git',
      async () => {
        const gitAs = (cwd: string, ...args: string[]) => {
          const r = spawnSync('git', args, { cwd, uid: user.uid, gid: user.gid, env: { PATH: process.env.PATH } });
          expect(r.status, r.stderr?.toString()).toBe(0);
        };
        const attackGit = (gitDir: string) =>
          [
            `git config core.fsmonitor 'touch /tmp/pwned' && echo CONFIG-WRITTEN`,
            `echo 'touch /tmp/pwned' > ${gitDir}/hooks/post-checkout && echo HOOK-WRITTEN`,
            `mv .git .git-moved && echo MOVED`,
            `rm -rf .git && echo REMOVED`,
            `printf 'gitdir: evil\\n' > .git && echo REDIRECTED`,
            `git status --short >/dev/null && echo STATUS-READ`,
            'true',
          ].join('; ');
        const broken = ['CONFIG-WRITTEN', 'HOOK-WRITTEN', 'MOVED', 'REMOVED', 'REDIRECTED'];

        // .git as a directory.
        const dirRepo = await ownedDir(user);
        gitAs(dirRepo, 'init', '-q');
        const config = await readFile(join(dirRepo, '.git/config'), 'utf8');
        const [dirOut] = texts(
          // Listing .git as a writable path does not make it writable.
          await attack(user, dirRepo, { sandbox: 'bwrap', writablePaths: [join(dirRepo, '.git')] }, [
            { call: 'bash', args: { command: attackGit('.git') } },
          ]),
        );
        for (const marker of broken) expect(dirOut).not.toContain(marker);
        expect(dirOut).toContain('STATUS-READ'); // reading the repository still works
        expect(await readFile(join(dirRepo, '.git/config'), 'utf8')).toBe(config);
        expect(existsSync(join(dirRepo, '.git/hooks/post-checkout'))).toBe(false);

        // Hooks kept in the work tree (core.hooksPath, as husky sets it) are git control files too; one that does
        // not exist yet (the command could create it) makes bash refuse.
        const husky = await ownedDir(user);
        gitAs(husky, 'init', '-q');
        gitAs(husky, 'config', 'core.hooksPath', '.husky');
        await mkdir(join(husky, '.husky'));
        await writeFile(join(husky, '.husky/pre-commit'), 'npm test\n');
        await chownTree(husky, user);
        const [huskyOut] = texts(
          await attack(user, husky, { sandbox: 'bwrap' }, [
            {
              call: 'bash',
              args: {
                command:
                  "echo 'touch /tmp/pwned' > .husky/pre-commit && echo HOOK-CHANGED; echo x > .husky/post-checkout && echo HOOK-ADDED; mv .husky .h && echo MOVED; true",
              },
            },
          ]),
        );
        for (const marker of ['HOOK-CHANGED', 'HOOK-ADDED', 'MOVED']) expect(huskyOut).not.toContain(marker);
        expect(await readFile(join(husky, '.husky/pre-commit'), 'utf8')).toBe('npm test\n');
        expect(await readdir(join(husky, '.husky'))).toEqual(['pre-commit']);
        gitAs(husky, 'config', 'core.hooksPath', '.hooks-to-come');
        const [missingOut] = texts(
          await attack(user, husky, { sandbox: 'bwrap' }, [{ call: 'bash', args: { command: 'echo RAN' } }]),
        );
        expect(missingOut).toMatch(/^ERROR .*core\.hooksPath .*\.hooks-to-come, which does not exist/);

        // .git as a file naming a git directory inside the workspace (as `git init --separate-git-dir` makes).
        const fileRepo = await ownedDir(user);
        gitAs(fileRepo, 'init', '-q', '--separate-git-dir', join(fileRepo, 'store'));
        const gitFile = await readFile(join(fileRepo, '.git'), 'utf8');
        const storeConfig = await readFile(join(fileRepo, 'store/config'), 'utf8');
        const [fileOut] = texts(
          await attack(user, fileRepo, { sandbox: 'bwrap' }, [{ call: 'bash', args: { command: attackGit('store') } }]),
        );
        for (const marker of broken) expect(fileOut).not.toContain(marker);
        expect(await readFile(join(fileRepo, '.git'), 'utf8')).toBe(gitFile);
        expect(await readFile(join(fileRepo, 'store/config'), 'utf8')).toBe(storeConfig);
        expect(existsSync(join(fileRepo, 'store/hooks/post-checkout'))).toBe(false);

        // No .git yet: the command cannot create one (a background command holds the placeholder while a second
        // command tries), and nothing is left in the workspace afterwards.
        const bare = await ownedDir(user);
        const outcome = await attack(user, bare, { sandbox: 'bwrap' }, [
          { call: 'bash', args: { command: 'sleep 600', run_in_background: true } },
          {
            call: 'bash',
            args: {
              command:
                'git init -q && git config core.fsmonitor x && echo INITIALIZED; mkdir .git/hooks && echo MADE; true',
            },
          },
          { call: 'stop_process', args: { id: 1 } },
          { call: 'bash', args: { command: 'git init -q . && echo INITIALIZED; true' } },
        ]);
        const bareOut = texts(outcome).join('\n');
        expect(bareOut).not.toContain('INITIALIZED');
        expect(bareOut).not.toContain('MADE');
        expect(await readdir(bare)).toEqual([]);

        // A .git symbolic link cannot be held in place: bash refuses to run rather than run unprotected.
        const linked = await ownedDir(user);
        await symlink(join(dirRepo, '.git'), join(linked, '.git'));
        const [linkOut] = texts(
          await attack(user, linked, { sandbox: 'bwrap' }, [{ call: 'bash', args: { command: 'echo RAN' } }]),
        );
        expect(linkOut).toMatch(/^ERROR .*\.git is a symbolic link/);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'runs nothing unsandboxed unless opted in by name: none and a failed auto are typed errors',
      async () => {
        const root = await ownedDir(user);
        const none = await attack(user, root, { sandbox: 'none' }, [{ call: 'bash', args: { command: 'echo RAN' } }]);
        expect(none.registration.error).toMatchObject({
          name: 'UtcpError',
          code: 'INVALID_CONFIG',
          message: expect.stringContaining('dangerouslyRunUnsandboxed: true'),
        });
        const auto = await attack(user, root, { sandbox: 'auto', bwrapPath: join(root, 'no-bwrap') }, []);
        expect(auto.registration.error).toMatchObject({
          name: 'UtcpError',
          code: 'NOT_SUPPORTED',
          message: expect.stringMatching(/bubblewrap.*dangerouslyRunUnsandboxed: true/s),
        });
        // Without bash there is nothing to sandbox: the file tools register with sandbox none.
        const files = await attack(user, root, { sandbox: 'none', tools: ['read', 'ls'] }, []);
        expect(files.registration).toMatchObject({ sandbox: 'none' });
        // What the opt-in accepts: the host's secrets through /proc (so the refusal above is what protects them).
        const [opted] = texts(
          await attack(user, root, { sandbox: 'none', dangerouslyRunUnsandboxed: true }, [
            { call: 'bash', args: { command: "tr '\\0' '\\n' < /proc/$PPID/environ | grep UTCP_HOST_SECRET" } },
          ]),
        );
        expect(opted).toContain(SECRET);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'a double fork that drops the marker dies with its command, on stop_process and on close()',
      async () => {
        const root = await ownedDir(user);
        // The escapee's name is put together by the shell, so no command line but the escapee's own holds it.
        const head = 'utcp-escapee-';
        const tail = randomBytes(4).toString('hex');
        const tag = `${head}${tail}`;
        const escapee = (name: string) =>
          `T=${head}; (env -u UTCP_CODE_TOOLS_PROCESS setsid bash -c "exec -a \${T}${tail}-${name} sleep 600" </dev/null >/dev/null 2>&1 &)`;
        const steps: Step[] = [
          { call: 'bash', args: { command: `${escapee('fg')}; sleep 0.2; echo started` } },
          { survivors: `${tag}-fg`, waitMs: 5000 },
          { call: 'bash', args: { command: `${escapee('bg')}; exec sleep 600`, run_in_background: true } },
          { present: `${tag}-bg`, waitMs: 10_000 },
          { call: 'stop_process', args: { id: 2 } },
          { survivors: `${tag}-bg`, waitMs: 5000 },
          { call: 'bash', args: { command: `${escapee('close')}; exec sleep 600`, run_in_background: true } },
          { present: `${tag}-close`, waitMs: 10_000 },
          { close: true },
          { survivors: `${tag}-close`, waitMs: 5000 },
        ];
        const sandboxed = texts(await attack(user, root, { sandbox: 'bwrap' }, steps));
        expect(sandboxed[0]).toContain('started');
        expect(sandboxed[1]).toBe(''); // the foreground command's escapee died with it
        expect(sandboxed[3]).not.toBe(''); // the escapee was running (the check can see it)
        expect(sandboxed[5]).toBe('');
        expect(sandboxed[7]).not.toBe('');
        expect(sandboxed[9]).toBe('');
        // The command stops its namespace's init (ptrace attach sends it SIGSTOP), so the namespace outlives the
        // command's own end: close() still takes it down.
        const ptrace = process.arch === 'x64' ? 101 : 117;
        const stoppedInit = texts(
          await attack(user, root, { sandbox: 'bwrap' }, [
            {
              call: 'bash',
              args: {
                command: `${escapee('init')}; sleep 0.2; perl -e 'syscall(${ptrace}, 16, 1, 0, 0) == 0 and print "INIT STOPPED\\n"'`,
                run_in_background: true, // its call would wait for the stopped init until the bash timeout
              },
            },
            { present: `${tag}-init`, waitMs: 10_000 },
            { close: true },
            { survivors: `${tag}-init`, waitMs: 5000 },
          ]),
        );
        expect(stoppedInit[1]).not.toBe(''); // the escapee was running
        expect(stoppedInit[3]).toBe('');
        // Control: without the sandbox the same escapee outlives close() (what the opt-in accepts).
        const control = texts(
          await attack(user, root, { sandbox: 'none', dangerouslyRunUnsandboxed: true }, [
            ...steps.slice(6, 9),
            { present: `${tag}-close`, waitMs: 10_000 },
            { kill: `${tag}-close` },
          ]),
        );
        expect(control[3]).not.toBe('');
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'a host killed with SIGKILL takes its sandboxes down (--die-with-parent), escapees included',
      async () => {
        const root = await ownedDir(user);
        const head = 'utcp-orphan-';
        const tail = randomBytes(4).toString('hex');
        const steps = (name: string): Step[] => [
          {
            call: 'bash',
            args: {
              command: `T=${head}; (env -u UTCP_CODE_TOOLS_PROCESS setsid bash -c "exec -a \${T}${tail}-${name}-esc sleep 600" </dev/null >/dev/null 2>&1 &); exec -a \${T}${tail}-${name}-main sleep 600`,
              run_in_background: true,
            },
          },
          { present: `${head}${tail}-${name}-esc`, waitMs: 10_000 },
          { print: true },
          { sleep: RUN_DEADLINE_MS },
        ];
        const crashed = await attackThenCrash(user, root, { sandbox: 'bwrap' }, steps('bwrap'));
        expect(String(crashed.results[1].value)).not.toBe(''); // the escapee was running when the host died
        expect(await survivors(`${head}${tail}-bwrap`, 5000)).toEqual([]);
        // Control: an unsandboxed host that dies leaves its processes behind (killed here).
        await attackThenCrash(user, root, { sandbox: 'none', dangerouslyRunUnsandboxed: true }, steps('none'));
        const left = await survivors(`${head}${tail}-none`, 0);
        for (const pid of left) process.kill(pid, 'SIGKILL');
        expect(left).not.toEqual([]);
      },
      TEST_TIMEOUT_MS,
    );
  });
});
