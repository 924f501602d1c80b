/**
 * What the bash reader found in a template, and the verdict drawn from it
 * (docs/design/threat-model.md#cli-evaluating-contexts): arguments reaching code contexts are refused,
 * arguments reaching arithmetic or name contexts must be integer literals. Split from shell-contexts.ts.
 */
import { UtcpError } from '../../core/errors.js';
import type { Ref } from './bash-syntax.js';

export interface ContextReport {
  /** Argument name → the construct that needs its value to be an integer literal. */
  integers: Map<string, string>;
}

interface Event {
  refs: Set<Ref>;
  construct: string;
  step: number;
}

export class AnalysisState {
  step = 0;
  readonly integer: Event[] = [];
  readonly code: Event[] = [];
  readonly assigns = new Map<string, Set<Ref>>();
  readonly stepRefs = new Set<Ref>();
  readonly placeholders = new Set<string>();

  note(refs: Set<Ref>): void {
    for (const r of refs) {
      this.stepRefs.add(r);
      if (r.startsWith('ph:')) this.placeholders.add(r.slice(3));
    }
  }

  integerContext(refs: Set<Ref>, construct: string): void {
    if (refs.size > 0) this.integer.push({ refs, construct, step: this.step });
  }

  codeContext(refs: Set<Ref>, construct: string): void {
    if (refs.size > 0) this.code.push({ refs, construct, step: this.step });
  }

  assign(name: string, sources: Set<Ref>): void {
    let set = this.assigns.get(name);
    if (!set) this.assigns.set(name, (set = new Set()));
    for (const s of sources) set.add(s);
  }

  /** Placeholders reaching `ref` through assignments (positional parameters and `read` targets: all of them). */
  #taint(ref: Ref, seen = new Set<Ref>()): Set<string> {
    const out = new Set<string>();
    if (seen.has(ref)) return out;
    seen.add(ref);
    if (ref.startsWith('ph:')) {
      out.add(ref.slice(3));
      return out;
    }
    if (ref === 'var:@' || ref === 'all') {
      for (const p of this.placeholders) out.add(p);
      return out;
    }
    for (const source of this.assigns.get(ref.slice(4)) ?? []) for (const p of this.#taint(source, seen)) out.add(p);
    return out;
  }

  resolve(): ContextReport {
    for (const event of this.code) {
      for (const ref of event.refs) {
        const reached = [...this.#taint(ref)];
        if (reached.length === 0) continue;
        const via = ref.startsWith('var:') ? ` (through $${ref.slice(4)})` : '';
        throw new UtcpError(
          'INVALID_MANUAL',
          `cli: commands[${event.step}]: the value of argument "${reached[0]}" would be run as code by ${event.construct}${via}; ` +
            'pass values only as plain arguments, strings or here-document text',
        );
      }
    }
    const integers = new Map<string, string>();
    for (const event of this.integer) {
      for (const ref of event.refs) {
        for (const p of this.#taint(ref)) {
          if (!integers.has(p))
            integers.set(p, ref.startsWith('var:') ? `${event.construct} (through $${ref.slice(4)})` : event.construct);
        }
      }
    }
    return { integers };
  }
}
