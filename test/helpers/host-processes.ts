/**
 * Finding processes from the host's side when they run in a PID namespace of their own
 * (docs/design/threat-model.md#process-trees): a pid printed inside (`$!`, `process.pid`) is a pid of that
 * namespace, not of ours. Linux only; reading another process's environment needs root or the same uid.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Live (non-zombie) host pids whose environment holds `entry` (`NAME=value`). */
export function pidsWithEnv(entry: string): number[] {
  const needle = Buffer.from(`\0${entry}\0`);
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const environ = Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${name}/environ`), Buffer.from([0])]);
      if (environ.includes(needle)) found.push(Number(name));
    } catch {
      // exited, or not ours to read
    }
  }
  return found;
}

/** The pid as the process sees itself: the last field of `NSpid` (equal to the host pid outside a namespace). */
export function innerPid(hostPid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${hostPid}/status`, 'latin1');
    const line = /^NSpid:\s*(.*)$/m.exec(status)?.[1];
    return line === undefined ? hostPid : Number(line.trim().split(/\s+/).at(-1));
  } catch {
    return undefined;
  }
}

/** The host pid of the process holding `entry` in its environment that sees itself as `pid`. */
export function hostPidOf(pid: number, entry: string): number | undefined {
  return pidsWithEnv(entry).find((p) => innerPid(p) === pid);
}
