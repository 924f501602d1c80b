/**
 * bench/profile-phases.ts turns a CPU profile into the phase split the cold-registration row's note reports: a
 * sample counts for the innermost frame a phase names, garbage collection apart, and only between the first and the
 * last sample of any phase.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { profilePhases } from '../../bench/profile-phases.js';

const dir = mkdtempSync(join(tmpdir(), 'utcp-profile-phases-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({
  id,
  callFrame: { functionName, url, scriptId: 0, lineNumber: 0, columnNumber: 0 },
  children,
});

describe('profilePhases', () => {
  it('attributes samples to the innermost named phase, GC apart, within the phases window', () => {
    const nodes = [
      frame(1, '(root)', '', [2, 6, 7]),
      frame(2, 'register', 'file:///x/core/client.js', [3, 5]),
      frame(3, 'parse', 'file:///x/core/document.js', [4]),
      frame(4, 'check', 'file:///x/core/validate.js'),
      frame(5, 'helper', 'file:///x/core/other.js'),
      frame(6, '(garbage collector)', ''),
      frame(7, 'startup', 'file:///x/main.js'),
    ];
    // Time order: startup (outside the window), parse, check under parse, GC, helper, parse, startup again.
    const samples = [7, 3, 4, 6, 5, 3, 7];
    const timeDeltas = [1000, 2000, 3000, 4000, 5000, 6000, 7000];
    const file = join(dir, 'a.cpuprofile');
    writeFileSync(file, JSON.stringify({ nodes, samples, timeDeltas, startTime: 0, endTime: 28000 }));
    const phases = profilePhases(file, [
      { label: 'parsing', fn: 'parse', url: 'core/document.js' },
      { label: 'checking', fn: 'check', url: 'core/validate.js' },
      { label: 'not this one', fn: 'check', url: 'elsewhere.js' },
    ]);
    expect(phases).toEqual({ parsing: 8, checking: 3, 'not this one': 0, 'garbage collection': 4, other: 5 });
  });

  it('gives zeros when no phase ran', () => {
    const file = join(dir, 'b.cpuprofile');
    writeFileSync(
      file,
      JSON.stringify({
        nodes: [frame(1, '(root)', '', [2]), frame(2, 'idle', 'x.js')],
        samples: [2],
        timeDeltas: [10],
      }),
    );
    expect(profilePhases(file, [{ label: 'parsing', fn: 'parse', url: 'x.js' }])).toEqual({
      parsing: 0,
      'garbage collection': 0,
      other: 0,
    });
  });
});
