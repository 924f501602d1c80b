import { ToolExecutionError } from '../../core/errors.js';

/** The GraphQL server answered with `errors`. `errors` holds them as sent; `data` the partial result, if any. */
export class GraphqlError extends ToolExecutionError {
  static override readonly errorKind: string = 'GraphqlError';
  override name = 'GraphqlError';
  readonly errors: unknown[];
  readonly data: unknown;
  constructor(what: string, errors: unknown[], data?: unknown) {
    super(`${what} failed: ${summarize(errors)}`, { errors, data: data ?? null });
    this.errors = errors;
    this.data = data ?? null;
  }
}

/** Joins the error messages, bounded so a chatty server cannot flood logs. */
function summarize(errors: unknown[]): string {
  const messages = errors.map((e) => {
    const m = (e as { message?: unknown } | null)?.message;
    return typeof m === 'string' ? m : JSON.stringify(e);
  });
  const joined = messages.join('; ');
  return joined.length > 500 ? `${joined.slice(0, 500)}…` : joined || 'unknown error';
}
