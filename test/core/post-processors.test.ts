import { describe, expect, it } from 'vitest';
import { postProcessorFromConfig } from '../../src/core/post-processors.js';
import type { Tool } from '../../src/core/types.js';

const tool = {
  name: 'm.t',
  description: '',
  inputs: {},
  outputs: {},
  tags: [],
  tool_call_template: { call_template_type: 'http' },
} as Tool;
const ctx = { tool, manualName: 'm', args: {} };

describe('filter_dict', () => {
  it('excludes keys at any depth and drops items that became empty', () => {
    const p = postProcessorFromConfig({ tool_post_processor_type: 'filter_dict', exclude_keys: ['secret', 'x'] });
    expect(p({ a: 1, secret: 2, nested: { secret: 3, b: [{ x: 1 }, { c: 1 }, 5] } }, ctx)).toEqual({
      a: 1,
      nested: { b: [{ c: 1 }, 5] },
    });
  });

  it('only_include keeps listed keys and non-empty containers', () => {
    const p = postProcessorFromConfig({ tool_post_processor_type: 'filter_dict', only_include_keys: ['id', 'name'] });
    expect(p({ id: 1, junk: 2, items: [{ id: 2, junk: 1 }, { junk: 3 }, 7], meta: { junk: 1 } }, ctx)).toEqual({
      id: 1,
      items: [{ id: 2 }],
    });
    expect(p('scalar', ctx)).toBe('scalar');
  });

  it('passes results through unchanged for tools or manuals the filters exclude', () => {
    const p = postProcessorFromConfig({
      tool_post_processor_type: 'filter_dict',
      exclude_keys: ['a'],
      only_include_manuals: ['other'],
    });
    expect(p({ a: 1 }, ctx)).toEqual({ a: 1 });
    const q = postProcessorFromConfig({
      tool_post_processor_type: 'filter_dict',
      exclude_keys: ['a'],
      exclude_tools: ['m.t'],
    });
    expect(q({ a: 1 }, ctx)).toEqual({ a: 1 });
  });
});

describe('limit_strings', () => {
  it('truncates every string by code points without splitting surrogate pairs', () => {
    const p = postProcessorFromConfig({ tool_post_processor_type: 'limit_strings', limit: 3 });
    expect(p({ a: 'abcdef', b: ['😀😀😀😀'], n: 5 }, ctx)).toEqual({ a: 'abc', b: ['😀😀😀'], n: 5 });
  });
});
