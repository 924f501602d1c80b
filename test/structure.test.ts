/**
 * The structure drawing (docs/design/structure.md, docs/design/README.md#structure) is generated from the imports in
 * src/: it must be current, and the parts of src/ must import one another without a circle.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { STRUCTURE_DOC, partCircles, partGraph, renderStructure } from '../scripts/structure.js';

describe('structure drawing', () => {
  it('is current: `npm run structure` would write the same page', () => {
    expect(readFileSync(STRUCTURE_DOC, 'utf8')).toBe(renderStructure(partGraph()));
  });

  it('shows no circle between the parts of src/', () => {
    expect(partCircles(partGraph())).toEqual([]);
  });

  it('finds a circle when there is one (the check can fail)', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    expect(partCircles(graph)).toEqual(['a → b → c → a']);
  });
});
