/** Benchmark helpers: warm-up, rounds, medians, and a description of the machine. */
import os from 'node:os';

export interface Stats {
  median: number;
  p90: number;
  min: number;
  rounds: number;
}

export function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * (s.length - 1)))];
  return { median: at(0.5), p90: at(0.9), min: s[0], rounds: s.length };
}

/** Runs `fn` `warmup` times untimed, then `rounds` timed; returns per-round milliseconds. */
export async function measure(fn: () => unknown | Promise<unknown>, rounds: number, warmup = 1): Promise<Stats> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  return stats(samples);
}

export function machine() {
  return {
    node: process.version,
    platform: `${os.platform()} ${os.arch()}`,
    cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}`,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    date: new Date().toISOString(),
    /** 1, 5 and 15 minute load averages when this was taken (the machine is shared). */
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

export const fmt = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3));

/** One result row; `ratio` = how many times better utcp-kit did than the row named in `vs`, in the same run. */
export interface Row {
  suite: string;
  case: string;
  subject: string;
  unit: 'ms' | 'ops/s' | 'MB' | 'packages';
  value: number;
  p90?: number;
  rounds?: number;
  vs?: string;
  ratio?: number;
  target?: string;
  met?: boolean;
  note?: string;
}
