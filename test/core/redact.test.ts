/**
 * The redactor's walks (docs/design/threat-model.md#template-nesting): an error's cause chain is followed with a
 * worklist, whatever its length, and data nested past the walk's depth is replaced, never passed on unredacted.
 */
import { describe, expect, it } from 'vitest';
import { REDACTED, Redactor } from '../../src/core/redact.js';

const SECRET = 'sk-secret-value-1234';

function redactor(): Redactor {
  const r = new Redactor();
  r.add([SECRET]);
  return r;
}

describe('Redactor', () => {
  it('redacts every error of a cause chain 20,000 long (no RangeError)', () => {
    let error = new Error(`innermost ${SECRET}`);
    const innermost = error;
    for (let i = 0; i < 20_000; i++) error = new Error(`level ${i}`, { cause: error });
    error.message = `outer ${SECRET}`;
    expect(() => redactor().error(error)).not.toThrow();
    expect(error.message).toBe(`outer ${REDACTED}`);
    expect(innermost.message).toBe(`innermost ${REDACTED}`);
    expect(innermost.stack).not.toContain(SECRET);
  });

  it('a cycle of causes ends', () => {
    const a = new Error(`a ${SECRET}`);
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    redactor().error(a);
    expect(a.message).toBe(`a ${REDACTED}`);
  });

  it('data nested deeper than the walk goes is replaced, not passed on with the secret', () => {
    let data: unknown = { token: SECRET };
    for (let i = 0; i < 10; i++) data = { a: data };
    const out = redactor().data(data);
    expect(JSON.stringify(out)).not.toContain(SECRET);
    expect(JSON.stringify(out)).toContain(REDACTED);
    expect(redactor().data({ a: { token: SECRET } })).toEqual({ a: { token: REDACTED } });
  });
});
