/** Test helpers for the OpenAPI converter: every `$ref` of a tool schema must resolve inside that schema. */
import { expect } from 'vitest';
import { collectRefs, resolveInside } from './openapi-refs.js';

export { collectRefs, resolveInside };

/** Fails unless every `$ref` inside `schema` resolves within `schema` itself. Returns the refs found. */
export function expectRefsResolve(schema: unknown, label = 'schema'): Array<{ ref: string; at: string }> {
  const refs = collectRefs(schema);
  const dangling = refs.filter((r) => resolveInside(schema, r.ref) === undefined);
  expect(dangling, `${label} has dangling $refs`).toEqual([]);
  return refs;
}
