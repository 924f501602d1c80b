/**
 * Linux's process table as /proc shows it: one reader for every caller that finds processes by group, parent
 * or environment marker (process groups of the cli and MCP stdio transports, the code tools' process manager;
 * docs/design/threat-model.md#process-trees). Elsewhere (no /proc) it returns undefined and callers probe
 * the group with signal 0.
 *
 * Synchronous on purpose: /proc reads are memory-backed, and a few hundred of them take milliseconds in one go,
 * against tens of milliseconds queued one by one on the thread pool.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcEntry {
  pid: number;
  ppid: number;
  pgrp: number;
  /** The command name (`comm`), e.g. `bwrap`. */
  comm: string;
  /** False for a zombie (or a dead process not yet reaped). */
  live: boolean;
  /** When it started, in clock ticks since boot (`starttime`); a process forked later never has a smaller one. */
  start: number;
}

/**
 * Every process /proc lists, this process excluded (only pids `from` to `to` when given: the rest is not read);
 * undefined when /proc cannot be read.
 */
export function readProcTable(range?: { from: number; to: number }): ProcEntry[] | undefined {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const entries: ProcEntry[] = [];
  for (const name of names) {
    const first = name.charCodeAt(0);
    if (first < 48 || first > 57) continue;
    const pid = Number(name);
    if (pid === process.pid || (range !== undefined && (pid < range.from || pid > range.to))) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue; // exited meanwhile
    }
    // "<pid> (<comm>) <state> <ppid> <pgrp> ...": comm may hold spaces and parentheses, so split after the last ')'.
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    entries.push({
      pid,
      ppid: Number(fields[1]),
      pgrp: Number(fields[2]),
      comm: stat.slice(stat.indexOf('(') + 1, close),
      live: fields[0] !== 'Z' && fields[0] !== 'X',
      start: Number(fields[19]),
    });
  }
  return entries;
}

/**
 * The pid this PID namespace allocated last (`/proc/sys/kernel/ns_last_pid`); undefined when unreadable. Pids are
 * handed out in increasing order until they wrap at `pid_max`, so while this is at least a leader's pid, every
 * process forked since the leader has a pid between the two.
 */
export function lastPid(): number | undefined {
  try {
    const n = Number(readFileSync('/proc/sys/kernel/ns_last_pid', 'latin1'));
    return Number.isSafeInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/** When `pid` started, in clock ticks since boot; undefined when /proc cannot tell (gone, or not Linux). */
export function processStart(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const start = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    return Number.isFinite(start) ? start : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The value of variable `name` in the environment `pid` started with, when it starts with `prefix`;
 * undefined when absent, different, or unreadable (another user's process, or exited).
 */
export function environValue(pid: number, name: string, prefix = ''): string | undefined {
  let environ: Buffer;
  try {
    // Leading NUL so the first variable matches too.
    environ = Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${pid}/environ`)]);
  } catch {
    return undefined;
  }
  const at = environ.indexOf(`\0${name}=${prefix}`);
  if (at < 0) return undefined;
  const start = at + 1 + name.length + 1;
  const end = environ.indexOf(0, start);
  return environ.subarray(start, end < 0 ? undefined : end).toString();
}
