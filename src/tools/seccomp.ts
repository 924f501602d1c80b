/**
 * The seccomp filter bubblewrap installs before it runs a `bash` command (docs/design/code-tools.md#seccomp).
 * A classic-BPF program, assembled here, that makes the kernel refuse:
 * - every syscall made with another architecture's calling convention (i386 `int 0x80` on x86_64, 32-bit ARM
 *   compat on aarch64): the process is killed, since syscall numbers mean different calls there;
 * - the x32 ABI on x86_64 (numbers with bit 30 set): ENOSYS;
 * - `socket()` of any address family but IPv4, IPv6 and netlink: EAFNOSUPPORT. Above all AF_UNIX: a filesystem
 *   UNIX socket (Docker, D-Bus, databases) can be connected through a read-only bind mount, and an abstract one
 *   needs no file at all; AF_VSOCK reaches the hypervisor whatever the network namespace;
 * - `socketpair()` of datagram sockets: EAFNOSUPPORT (a datagram socket can be pointed at any UNIX socket with
 *   `connect`/`sendto`; stream and seqpacket pairs are connected to each other for good and reach nothing else);
 * - io_uring (`io_uring_setup`, `_enter`, `_register`): ENOSYS, since its operations open and connect sockets
 *   without the syscalls above;
 * - the kernel keyrings (`add_key`, `request_key`, `keyctl`): ENOSYS, since the command inherits the host
 *   process's session keyring and could read the keys in it;
 * - setuid and setgid bits in a file mode (`chmod` and its variants, `open`/`openat` with O_CREAT or O_TMPFILE,
 *   `creat`, `mknod`): EPERM. A root host's command is uid 0 without capabilities, but an owner may set these bits
 *   without one, and a setuid-root file written to the workspace would make anyone who runs it on the host root.
 *   `openat2` (its mode lies in a struct the filter cannot read) fails with ENOSYS, so callers fall back to openat.
 * Everything else is allowed. The program is the raw `struct sock_filter[]` bwrap reads from `--seccomp FD`.
 */

// Classic BPF opcodes (linux/filter.h, linux/bpf_common.h).
const BPF_LD_W_ABS = 0x00 | 0x00 | 0x20;
const BPF_JMP_JEQ_K = 0x05 | 0x10 | 0x00;
const BPF_JMP_JGE_K = 0x05 | 0x30 | 0x00;
const BPF_JMP_JSET_K = 0x05 | 0x40 | 0x00;
const BPF_ALU_AND_K = 0x04 | 0x50 | 0x00;
const BPF_RET_K = 0x06 | 0x00;

// Return actions (linux/seccomp.h).
const RET_KILL_PROCESS = 0x80000000;
const RET_ERRNO = 0x00050000;
const RET_ALLOW = 0x7fff0000;

// struct seccomp_data offsets: nr, arch, then args[6] as 64-bit values (low word first on little-endian).
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const argLow = (index: number) => 16 + 8 * index;

const ENOSYS = 38;
const EAFNOSUPPORT = 97;
const EPERM = 1;
const S_ISUID_ISGID = 0o6000;
/** O_CREAT and __O_TMPFILE: the open flags that make the kernel use the mode argument (same on both arches). */
const O_CREATES = 0o100 | 0o20000000;
const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;
const SOCK_TYPE_MASK = 0xf;
const SOCK_DGRAM = 2;
const X32_SYSCALL_BIT = 0x40000000;

interface SeccompArch {
  /** AUDIT_ARCH_* of the native ABI. */
  audit: number;
  socket: number;
  socketpair: number;
  ioUring: readonly number[];
  /** add_key, request_key, keyctl. */
  keyring: readonly number[];
  /** Calls that take a file mode, by the index of the mode argument. */
  modeAt: Record<1 | 2 | 3, readonly number[]>;
  /** Calls that take open flags then a mode: [nr, flags index]. */
  openAt: readonly [number, 1 | 2][];
  openat2: number;
  /** x86_64 also accepts x32 numbers under its own audit arch; they are refused. */
  x32: boolean;
}

/** Syscall numbers per Node `process.arch` (arch/x86/entry/syscalls/syscall_64.tbl, include/uapi/asm-generic/unistd.h). */
const ARCHES: Record<string, SeccompArch> = {
  x64: {
    audit: 0xc000003e,
    socket: 41,
    socketpair: 53,
    ioUring: [425, 426, 427],
    keyring: [248, 249, 250],
    // chmod, fchmod, creat, mknod | fchmodat, mknodat, fchmodat2
    modeAt: { 1: [90, 91, 85, 133], 2: [268, 259, 452], 3: [] },
    openAt: [
      [2, 1], // open(path, flags, mode)
      [257, 2], // openat(dirfd, path, flags, mode)
    ],
    openat2: 437,
    x32: true,
  },
  arm64: {
    audit: 0xc00000b7,
    socket: 198,
    socketpair: 199,
    ioUring: [425, 426, 427],
    keyring: [217, 218, 219],
    // fchmod | fchmodat, mknodat, fchmodat2
    modeAt: { 1: [52], 2: [53, 33, 452], 3: [] },
    openAt: [[56, 2]], // openat(dirfd, path, flags, mode)
    openat2: 437,
    x32: false,
  },
};

/** The architectures the filter supports (others get no kernel sandbox: docs/design/code-tools.md#seccomp). */
export const SECCOMP_ARCHES = Object.keys(ARCHES);

type Target = number | string;
interface Insn {
  code: number;
  jt: Target;
  jf: Target;
  k: number;
}

/** A tiny assembler: jumps name a label, resolved to the relative offsets classic BPF wants. */
function assemble(program: (Insn | string)[]): Buffer {
  const labels = new Map<string, number>();
  const insns: Insn[] = [];
  for (const item of program) {
    if (typeof item === 'string') labels.set(item, insns.length);
    else insns.push(item);
  }
  const out = Buffer.alloc(insns.length * 8);
  insns.forEach((insn, at) => {
    const offset = (target: Target): number => {
      if (typeof target === 'number') return target;
      const to = labels.get(target);
      if (to === undefined) throw new Error(`seccomp: unknown label ${target}`);
      const jump = to - at - 1;
      if (jump < 0 || jump > 255) throw new Error(`seccomp: jump to ${target} out of range`);
      return jump;
    };
    out.writeUInt16LE(insn.code, at * 8);
    out.writeUInt8(offset(insn.jt), at * 8 + 2);
    out.writeUInt8(offset(insn.jf), at * 8 + 3);
    out.writeUInt32LE(insn.k >>> 0, at * 8 + 4);
  });
  return out;
}

const load = (offset: number): Insn => ({ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: offset });
const jeq = (k: number, jt: Target, jf: Target = 0): Insn => ({ code: BPF_JMP_JEQ_K, jt, jf, k });
const ret = (k: number): Insn => ({ code: BPF_RET_K, jt: 0, jf: 0, k });

/**
 * The filter for `arch` (a Node `process.arch`; default this process's), or undefined when it is not supported.
 * Both supported architectures are little-endian, which the argument offsets assume.
 */
export function seccompFilter(arch: string = process.arch): Buffer | undefined {
  const a = ARCHES[arch];
  if (!a) return undefined;
  const program: (Insn | string)[] = [
    load(OFFSET_ARCH),
    jeq(a.audit, 0, 'kill'),
    load(OFFSET_NR),
    ...(a.x32 ? [{ code: BPF_JMP_JGE_K, jt: 'enosys', jf: 0, k: X32_SYSCALL_BIT }] : []),
    jeq(a.socket, 'socket'),
    jeq(a.socketpair, 'socketpair'),
    ...[...a.ioUring, ...a.keyring, a.openat2].map((nr) => jeq(nr, 'enosys')),
    ...([1, 2, 3] as const).flatMap((index) => a.modeAt[index].map((nr) => jeq(nr, `mode${index}`))),
    ...a.openAt.map(([nr, flags]) => jeq(nr, `open${flags}`)),
    ret(RET_ALLOW),
    // open-like calls read their mode only with O_CREAT or O_TMPFILE (otherwise it is whatever the caller left).
    'open1',
    load(argLow(1)),
    { code: BPF_JMP_JSET_K, jt: 'mode2', jf: 'allow', k: O_CREATES },
    'open2',
    load(argLow(2)),
    { code: BPF_JMP_JSET_K, jt: 'mode3', jf: 'allow', k: O_CREATES },
    ...([1, 2, 3] as const).flatMap((index) => [
      `mode${index}`,
      load(argLow(index)),
      { code: BPF_JMP_JSET_K, jt: 'eperm', jf: 'allow', k: S_ISUID_ISGID },
    ]),
    'socket',
    load(argLow(0)),
    jeq(AF_INET, 'allow'),
    jeq(AF_INET6, 'allow'),
    jeq(AF_NETLINK, 'allow'),
    ret(RET_ERRNO | EAFNOSUPPORT),
    'socketpair',
    load(argLow(1)),
    { code: BPF_ALU_AND_K, jt: 0, jf: 0, k: SOCK_TYPE_MASK },
    jeq(SOCK_DGRAM, 'afnosupport'),
    'allow',
    ret(RET_ALLOW),
    'afnosupport',
    ret(RET_ERRNO | EAFNOSUPPORT),
    'enosys',
    ret(RET_ERRNO | ENOSYS),
    'eperm',
    ret(RET_ERRNO | EPERM),
    'kill',
    ret(RET_KILL_PROCESS),
  ];
  return assemble(program);
}
