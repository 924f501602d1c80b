/**
 * Splits a V8 CPU profile (`node --cpu-prof`) into named phases, so that a row which misses its target can say where
 * the time went, measured in the same run: each sample counts for the innermost frame on its stack that a phase
 * names, or for garbage collection, or for "other".
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A phase: its label and the frames (function name, and a piece of the script's URL) that count for it. */
export interface Phase {
  label: string;
  fn: string;
  url: string;
}

/**
 * Milliseconds per phase label, between the first and the last sample that a phase names (the window the measured
 * work ran in), plus `garbage collection` (a frame of its own in V8's profiles) and `other` (the rest of the window:
 * module loading, idle waits, work no phase names) in that window.
 */
export function profilePhases(file: string, phases: readonly Phase[]): Record<string, number> {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const phaseOf = (n: ProfileNode) =>
    phases.find((p) => n.callFrame.functionName === p.fn && n.callFrame.url.includes(p.url))?.label;
  const labelOf = new Map<number, string | undefined>();
  const sampleLabel = (id: number): string | undefined => {
    if (labelOf.has(id)) return labelOf.get(id);
    let label: string | undefined;
    for (let node = byId.get(id); node !== undefined && label === undefined; node = byId.get(parent.get(node.id) ?? -1))
      label = phaseOf(node);
    labelOf.set(id, label);
    return label;
  };
  const labels = profile.samples.map(sampleLabel);
  const first = labels.findIndex((l) => l !== undefined);
  const last = labels.findLastIndex((l) => l !== undefined);
  const out: Record<string, number> = Object.fromEntries(phases.map((p) => [p.label, 0]));
  out['garbage collection'] = 0;
  out.other = 0;
  if (first === -1) return out;
  for (let i = first; i <= last; i++) {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const gc = byId.get(profile.samples[i])?.callFrame.functionName === '(garbage collector)';
    out[gc ? 'garbage collection' : (labels[i] ?? 'other')] += ms;
  }
  return out;
}
