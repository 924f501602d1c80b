/** Operation response → `outputs` (docs/design/openapi.md#outputs). */
import { collectObjectExamples } from './merge-examples.js';
import { baseMediaType, type OperationContext } from './operation-context.js';
import { decorateSchema } from './collect-parameters.js';
import { derefObject } from './ref-resolver.js';
import { isPlainObject } from '../../core/guards.js';
import type { SchemaRoot } from './schema-expander.js';

/** `200`, else `201`, else the first other `2xx`/`2XX` key in document order, else `default`. */
export function chooseResponseKey(responses: Record<string, unknown>): string | undefined {
  if ('200' in responses) return '200';
  if ('201' in responses) return '201';
  for (const key of Object.keys(responses)) if (/^2(\d\d|XX)$/i.test(key)) return key;
  return 'default' in responses ? 'default' : undefined;
}

/** `application/json`, else the first `+json` type, else the first content entry with a schema. */
function chooseResponseMedia(content: Record<string, unknown>): Record<string, unknown> | undefined {
  const keys = Object.keys(content);
  const pick =
    keys.find((k) => baseMediaType(k) === 'application/json') ??
    keys.find((k) => baseMediaType(k).endsWith('+json')) ??
    keys.find((k) => isPlainObject(content[k]) && (content[k] as Record<string, unknown>).schema !== undefined);
  const media = pick === undefined ? undefined : content[pick];
  return isPlainObject(media) ? media : undefined;
}

/** The expanded output schema (not yet finished with `$defs`), or `{}`. */
export function outputSchema(op: Record<string, unknown>, ctx: OperationContext, root: SchemaRoot): unknown {
  const responses = op.responses;
  if (!isPlainObject(responses)) return {};
  const key = chooseResponseKey(responses);
  if (key === undefined) return {};
  const d = derefObject(responses[key], ctx.resolver);
  if (!d.value) {
    ctx.drop(`response ${key}`, `${d.error}; outputs left empty`);
    return {};
  }
  const response = d.value;
  if (ctx.swagger2 || (response.schema !== undefined && response.content === undefined)) {
    if (response.schema === undefined) return {};
    const examples = isPlainObject(response.examples)
      ? collectObjectExamples({ examples: response.examples }, ctx.resolver, true)
      : [];
    return decorateSchema(root.expand(response.schema), undefined, examples);
  }
  if (!isPlainObject(response.content)) return {};
  const media = chooseResponseMedia(response.content);
  if (!media || media.schema === undefined) return {};
  return decorateSchema(root.expand(media.schema), undefined, collectObjectExamples(media, ctx.resolver));
}
