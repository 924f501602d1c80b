/** The conversion report: every skipped operation and dropped construct with its reason, plus counts. */

export interface OpenApiOperationRef {
  /** Lowercase method key, e.g. `get`. */
  method: string;
  path: string;
  operationId?: string;
}

export interface OpenApiSkippedOperation extends OpenApiOperationRef {
  reason: string;
}

export interface OpenApiDroppedConstruct {
  /** Where: `GET /pets/{id}`, `paths./x`, `template`, `document`. */
  location: string;
  /** What: `query parameter id`, `security`, `$ref ./other.yaml#/X`, … */
  construct: string;
  reason: string;
}

export interface OpenApiConversionReport {
  /** `2.0`, `3.0` or `3.1` (detected by key presence; `3.x` values other than 3.1 count as 3.0). */
  specVersion: '2.0' | '3.0' | '3.1';
  counts: {
    /** Operations seen (every method key of every path item, including head/options/trace). */
    operations: number;
    tools: number;
    skipped: number;
    filtered: number;
  };
  skipped: OpenApiSkippedOperation[];
  filtered: OpenApiOperationRef[];
  dropped: OpenApiDroppedConstruct[];
  /**
   * Variables (namespaced keys) that the generated tools need beyond the spec's security schemes, e.g.
   * `petstore_BASE_URL` for a relative server URL (docs/design/openapi.md#base-url-variable).
   */
  variables: string[];
  /** Constructs rewritten into their JSON Schema 2020-12 equivalent (`nullable`, `example`, boolean bounds, …). */
  changed: OpenApiDroppedConstruct[];
  /** Human-readable summary: one line per skipped operation, aggregated dropped constructs, the filter count. */
  warnings: string[];
}

function describe(op: OpenApiOperationRef): string {
  return `${op.method.toUpperCase()} ${op.path}${op.operationId ? ` (${op.operationId})` : ''}`;
}

/** Collects report entries during one conversion. */
export class ReportBuilder {
  operations = 0;
  tools = 0;
  readonly skipped: OpenApiSkippedOperation[] = [];
  readonly filtered: OpenApiOperationRef[] = [];
  readonly dropped: OpenApiDroppedConstruct[] = [];
  readonly changed: OpenApiDroppedConstruct[] = [];
  readonly variables = new Set<string>();

  skip(op: OpenApiOperationRef, reason: string): void {
    this.skipped.push({ ...op, reason });
  }

  drop(location: string, construct: string, reason: string): void {
    this.dropped.push({ location, construct, reason });
  }

  change(location: string, construct: string, reason: string): void {
    this.changed.push({ location, construct, reason });
  }

  build(specVersion: OpenApiConversionReport['specVersion']): OpenApiConversionReport {
    const warnings: string[] = [];
    for (const s of this.skipped) warnings.push(`Skipped ${describe(s)}: ${s.reason}`);
    // Identical problems (e.g. one unsupported scheme used by 300 operations) become one line.
    for (const [verb, list] of [
      ['Dropped', this.dropped],
      ['Changed', this.changed],
    ] as const) {
      const groups = new Map<string, { first: OpenApiDroppedConstruct; count: number }>();
      for (const d of list) {
        const key = `${d.construct}\u0000${d.reason}`;
        const g = groups.get(key);
        if (g) g.count++;
        else groups.set(key, { first: d, count: 1 });
      }
      for (const { first, count } of groups.values()) {
        const more = count > 1 ? ` and ${count - 1} more place${count > 2 ? 's' : ''}` : '';
        warnings.push(`${verb} ${first.construct} at ${first.location}${more}: ${first.reason}`);
      }
    }
    if (this.filtered.length > 0) warnings.push(`${this.filtered.length} operations filtered`);
    return {
      specVersion,
      counts: {
        operations: this.operations,
        tools: this.tools,
        skipped: this.skipped.length,
        filtered: this.filtered.length,
      },
      skipped: this.skipped,
      filtered: this.filtered,
      dropped: this.dropped,
      changed: this.changed,
      variables: [...this.variables],
      warnings,
    };
  }
}
