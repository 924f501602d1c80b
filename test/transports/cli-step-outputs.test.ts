/** The split of a bash cli call's stdout into step outputs (src/transports/cli/step-outputs.ts). */
import { describe, expect, it } from 'vitest';
import { TransportError } from '../../src/core/errors.js';
import { StepOutputs } from '../../src/transports/cli/step-outputs.js';

describe('StepOutputs', () => {
  it('splits at the token markers, across chunks, and hands each finished step over in order', async () => {
    const ended: string[] = [];
    const steps = new StepOutputs('tok', async (i, out) => {
      ended.push(`${i}:${out.toString()}`);
    });
    steps.push(Buffer.from('one\n'));
    steps.push(Buffer.from('\nto'));
    steps.push(Buffer.from('k:0\ntwo\n\ntok:end\n'));
    await steps.settled();
    expect(ended).toEqual(['0:one\n']);
    expect(steps.ended).toBe(true);
    expect(steps.output(0).toString()).toBe('one\n');
    expect(steps.output(1).toString()).toBe('two\n');
  });

  it('makes up no output for a step that never ran: a typed error names it', () => {
    const steps = new StepOutputs('tok', async () => {});
    steps.push(Buffer.from('only the first step ran\n\ntok:end\n'));
    expect(() => steps.output(1)).toThrow(TransportError);
    expect(() => steps.output(1)).toThrow(/step 2 never ran/);
  });

  it('gives back the bytes held as a possible marker start when the output ends without a marker', () => {
    const steps = new StepOutputs('tok', async () => {});
    steps.push(Buffer.from('hello\nto'));
    expect(steps.output(0).toString()).toBe('hell'); // 'o\nto' could still begin '\ntok:'
    steps.end();
    expect(steps.output(0).toString()).toBe('hello\nto');
  });

  it('notes a marker naming the wrong step instead of trusting the split', () => {
    const steps = new StepOutputs('tok', async () => {});
    steps.push(Buffer.from('x\ntok:5\n'));
    expect(steps.unexpectedLabel).toBe('5');
  });
});
