/**
 * The per-document bound on schema translation (docs/design/openapi.md#expansion-limits) and the one walk over a
 * parsed document that sizes it. Split from schema-expander.ts.
 */
import { jsonTreeBound } from '../../core/document.js';
import { UtcpLimitError } from '../../core/errors.js';

/** Per-document bound on translation work and output size (docs/design/openapi.md#expansion-limits). */
export class ExpansionBudget {
  work = 0;
  output = 0;
  readonly maxWork: number;
  readonly maxOutput: number;
  readonly #describeOutput: string;

  constructor(
    limits: { max_openapi_schema_work: number; max_openapi_expansion_factor: number; max_openapi_output_nodes: number },
    documentNodes: number,
  ) {
    this.maxWork = limits.max_openapi_schema_work;
    const scaled = limits.max_openapi_expansion_factor * documentNodes;
    this.maxOutput = Math.max(limits.max_openapi_output_nodes, scaled);
    this.#describeOutput =
      scaled > limits.max_openapi_output_nodes
        ? `limits.max_openapi_expansion_factor (${limits.max_openapi_expansion_factor}) × the document's ${documentNodes} nodes = ${this.maxOutput}`
        : `limits.max_openapi_output_nodes (${this.maxOutput})`;
  }

  visit(): void {
    if (++this.work > this.maxWork) {
      throw new UtcpLimitError(
        'max_openapi_schema_work',
        `OpenAPI conversion stopped: translating the document's schemas needs more than limits.max_openapi_schema_work (${this.maxWork}) schema objects; narrow it with openapi_filter or raise the limit`,
      );
    }
    this.#out(1);
  }

  reuse(nodes: number): void {
    this.#out(nodes);
  }

  #out(nodes: number): void {
    this.output += nodes;
    if (this.output > this.maxOutput) {
      throw new UtcpLimitError(
        this.#describeOutput.startsWith('limits.max_openapi_expansion_factor')
          ? 'max_openapi_expansion_factor'
          : 'max_openapi_output_nodes',
        `OpenAPI conversion stopped: the tool schemas would exceed ${this.#describeOutput} schema nodes (shared subschemas counted at every use); narrow the document with openapi_filter or raise the limit`,
      );
    }
  }
}

export interface DocumentSurvey {
  /** Objects of the document, each shared object once (the output allowance scales with it). */
  nodes: number;
  /** How many `$ref` keywords of the document name each reference, as written. */
  refUses: Map<string, number>;
}

/**
 * One walk over a parsed document: its object count and how often each `$ref` is written. A document parsed from JSON
 * text is a tree, walked without a set of visited objects (a third of the walk's time cold); any other document, or
 * one changed after parsing so that the walk meets more containers than its text could hold, keeps the set: a YAML
 * alias or a caller's object may share one object between places (each counted once) or even form a cycle.
 */
export function surveyDocument(doc: unknown): DocumentSurvey {
  const bound = jsonTreeBound(doc);
  return (bound !== undefined ? walk(doc, undefined, bound) : undefined) ?? walk(doc, new Set(), Infinity)!;
}

/** The survey, or undefined once more than `maxContainers` objects and arrays were met. */
function walk(doc: unknown, seen: Set<object> | undefined, maxContainers: number): DocumentSurvey | undefined {
  let nodes = 0;
  let containers = 0;
  const refUses = new Map<string, number>();
  const stack: unknown[] = [doc];
  // Indexed loops, no iterator objects: this walk visits every object of the document once, mostly before the
  // code is optimised (docs/design/performance.md#cold-openapi).
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x !== 'object' || x === null) continue;
    if (Array.isArray(x)) {
      if (seen) {
        if (seen.has(x)) continue;
        seen.add(x);
      } else if (++containers > maxContainers) return undefined;
      for (let i = 0; i < x.length; i++) {
        const v: unknown = x[i];
        if (typeof v === 'object' && v !== null) stack.push(v);
      }
      continue;
    }
    const obj = x as Record<string, unknown>;
    const ref = obj.$ref;
    // A YAML alias shares one object between places: each place uses its ref.
    if (typeof ref === 'string') refUses.set(ref, (refUses.get(ref) ?? 0) + 1);
    if (seen) {
      if (seen.has(obj)) continue;
      seen.add(obj);
    } else if (++containers > maxContainers) return undefined;
    nodes++;
    const keys = Object.keys(obj);
    for (let i = 0; i < keys.length; i++) {
      const v = obj[keys[i]];
      if (typeof v === 'object' && v !== null) stack.push(v);
    }
  }
  return { nodes, refUses };
}
