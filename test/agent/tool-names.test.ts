import { describe, expect, it } from 'vitest';
import { ToolNameCodec } from '../../src/agent/index.js';

const VALID = /^[a-zA-Z0-9_-]{1,64}$/;

describe('ToolNameCodec', () => {
  it('turns the manual separator into a double underscore and keeps readable names', () => {
    const names = new ToolNameCodec();
    expect(names.encode('github.list_issues')).toBe('github__list_issues');
    expect(names.decode('github__list_issues')).toBe('github.list_issues');
  });

  it('replaces characters providers reject', () => {
    const names = new ToolNameCodec();
    const wire = names.encode('petstore.GET /pets/{id}');
    expect(wire).toBe('petstore__GET__pets__id_');
    expect(names.decode(wire)).toBe('petstore.GET /pets/{id}');
  });

  it('adds a hash suffix when two names would collide, and both decode back', () => {
    const names = new ToolNameCodec();
    const a = names.encode('a.b c');
    const b = names.encode('a.b_c');
    expect(a).toBe('a__b_c');
    expect(b).toMatch(/^a__b_c_[0-9a-f]{8}$/);
    expect(names.decode(a)).toBe('a.b c');
    expect(names.decode(b)).toBe('a.b_c');
  });

  it('shortens long names to 64 characters with a hash, distinct for names sharing a prefix', () => {
    const names = new ToolNameCodec();
    const prefix = `svc.${'x'.repeat(80)}`;
    const one = names.encode(`${prefix}_one`);
    const two = names.encode(`${prefix}_two`);
    expect(one).toMatch(VALID);
    expect(two).toMatch(VALID);
    expect(one).toHaveLength(64);
    expect(one).not.toBe(two);
    expect(names.decode(one)).toBe(`${prefix}_one`);
    expect(names.decode(two)).toBe(`${prefix}_two`);
  });

  it('returns the same encoding for the same name and never hands out a reserved name', () => {
    const names = new ToolNameCodec({ reserved: ['search_tools'] });
    expect(names.encode('x.y')).toBe(names.encode('x.y'));
    expect(names.encode('search_tools')).toBe('search_tools');
    expect(names.encode('search tools')).toMatch(/^search_tools_[0-9a-f]{8}$/);
    expect(names.decode('search_tools')).toBeUndefined();
  });

  it('honours a smaller maximum length', () => {
    const names = new ToolNameCodec({ maxLength: 20 });
    const wire = names.encode('manual.a_rather_long_tool_name');
    expect(wire).toHaveLength(20);
    expect(names.decode(wire)).toBe('manual.a_rather_long_tool_name');
  });

  it('gives unknown encoded names no meaning', () => {
    expect(new ToolNameCodec().decode('weather__get')).toBeUndefined();
  });

  it('stays collision-free over many similar names', () => {
    const names = new ToolNameCodec();
    const inputs = Array.from({ length: 2000 }, (_, i) => (i % 2 ? `m.t ${i >> 1}` : `m.t_${i >> 1}`));
    const wires = inputs.map((n) => names.encode(n));
    expect(new Set(wires).size).toBe(inputs.length);
    expect(wires.every((w) => VALID.test(w))).toBe(true);
    expect(wires.map((w) => names.decode(w))).toEqual(inputs);
  });
});
