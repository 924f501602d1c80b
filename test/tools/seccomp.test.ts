/**
 * The seccomp program of the sandbox (docs/design/code-tools.md#seccomp), run by a small classic-BPF interpreter
 * for both architectures: the kernel loads only the native one here, so this is what checks the aarch64 program.
 * test/security/sandbox-kernel.test.ts runs the x86_64 one in the kernel.
 */
import { describe, expect, it } from 'vitest';
import { seccompFilter } from '../../src/tools/seccomp.js';

const KILL_PROCESS = 0x80000000;
const ALLOW = 0x7fff0000;
const errno = (n: number) => 0x00050000 | n;

/** Runs the program on one syscall, checking what the kernel's checker would (forward jumps, aligned loads). */
function run(program: Buffer, arch: number, nr: number, args: number[] = []): number {
  expect(program.length % 8).toBe(0);
  const count = program.length / 8;
  const data = Buffer.alloc(64);
  data.writeUInt32LE(nr >>> 0, 0);
  data.writeUInt32LE(arch >>> 0, 4);
  args.forEach((value, i) => data.writeUInt32LE(value >>> 0, 16 + 8 * i));
  let acc = 0;
  for (let pc = 0; pc < count; ) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    pc++;
    switch (code) {
      case 0x20: // ld [k]
        expect(k % 4).toBe(0);
        expect(k).toBeLessThan(64);
        acc = data.readUInt32LE(k);
        break;
      case 0x54: // and #k
        acc = (acc & k) >>> 0;
        break;
      case 0x15: // jeq #k
      case 0x35: // jge #k
      case 0x45: {
        // jset #k
        const taken = code === 0x15 ? acc === k : code === 0x35 ? acc >= k : (acc & k) !== 0;
        pc += taken ? jt : jf;
        expect(pc).toBeLessThan(count);
        break;
      }
      case 0x06: // ret #k
        return k;
      default:
        throw new Error(`unexpected opcode ${code.toString(16)}`);
    }
  }
  throw new Error('the program ran off its end');
}

const ARCHES = [
  {
    arch: 'x64',
    audit: 0xc000003e,
    foreign: 0x40000003, // AUDIT_ARCH_I386
    nr: { socket: 41, socketpair: 53, openat: 257, open: 2, fchmodat: 268, chmod: 90, keyctl: 250, getpid: 39 },
  },
  {
    arch: 'arm64',
    audit: 0xc00000b7,
    foreign: 0x40000028, // AUDIT_ARCH_ARM
    nr: { socket: 198, socketpair: 199, openat: 56, fchmodat: 53, keyctl: 219, getpid: 172 },
  },
] as const;

describe.each(ARCHES)('the seccomp program for $arch', ({ arch, audit, foreign, nr }) => {
  const program = seccompFilter(arch)!;

  it('kills a foreign architecture, and allows ordinary calls', () => {
    expect(run(program, foreign, nr.getpid)).toBe(KILL_PROCESS);
    expect(run(program, audit, nr.getpid)).toBe(ALLOW);
  });

  it('lets socket() make IPv4, IPv6 and netlink sockets only', () => {
    expect(run(program, audit, nr.socket, [2, 1])).toBe(ALLOW);
    expect(run(program, audit, nr.socket, [10, 2])).toBe(ALLOW);
    expect(run(program, audit, nr.socket, [16, 3])).toBe(ALLOW);
    for (const family of [1, 17, 40]) expect(run(program, audit, nr.socket, [family, 1])).toBe(errno(97));
    expect(run(program, audit, nr.socketpair, [1, 1 | 0o2000000])).toBe(ALLOW); // stream, SOCK_CLOEXEC
    expect(run(program, audit, nr.socketpair, [1, 5])).toBe(ALLOW); // seqpacket
    expect(run(program, audit, nr.socketpair, [1, 2 | 0o4000])).toBe(errno(97)); // datagram, SOCK_NONBLOCK
  });

  it('refuses io_uring, openat2 and the keyrings', () => {
    for (const call of [425, 426, 427, 437, nr.keyctl]) expect(run(program, audit, call)).toBe(errno(38));
  });

  it('refuses setuid and setgid bits, and nothing else of a mode', () => {
    expect(run(program, audit, nr.fchmodat, [-100, 0, 0o4755])).toBe(errno(1));
    expect(run(program, audit, nr.fchmodat, [-100, 0, 0o2755])).toBe(errno(1));
    expect(run(program, audit, nr.fchmodat, [-100, 0, 0o1777])).toBe(ALLOW);
    expect(run(program, audit, nr.openat, [-100, 0, 0o101, 0o6755])).toBe(errno(1)); // O_CREAT
    expect(run(program, audit, nr.openat, [-100, 0, 0o20200002, 0o4700])).toBe(errno(1)); // O_TMPFILE
    expect(run(program, audit, nr.openat, [-100, 0, 0o101, 0o644])).toBe(ALLOW);
    expect(run(program, audit, nr.openat, [-100, 0, 0, 0o4755])).toBe(ALLOW); // no O_CREAT: the mode is unused
    if ('chmod' in nr) {
      expect(run(program, audit, nr.chmod, [0, 0o4755])).toBe(errno(1));
      expect(run(program, audit, nr.open, [0, 0o101, 0o4755])).toBe(errno(1));
      expect(run(program, audit, nr.open, [0, 0, 0o4755])).toBe(ALLOW);
    }
  });

  if (arch === 'x64')
    it('refuses the x32 ABI', () => {
      expect(run(program, audit, 0x40000000 | 39)).toBe(errno(38));
    });
});

it('has no program for other architectures (so no bwrap sandbox there)', () => {
  expect(seccompFilter('riscv64')).toBeUndefined();
});
