/** What the per-operation builders (parameters, bodies, outputs, security) share. */
import type { RefResolver } from './ref-resolver.js';

export interface OperationContext {
  swagger2: boolean;
  resolver: RefResolver;
  doc: Record<string, unknown>;
  /** e.g. `GET /pets/{id}` */
  where: string;
  /** Records a dropped construct of this operation with its reason. */
  drop(construct: string, reason: string): void;
}

const JSON_BASE = /^application\/json$|\+json$|^\*\/\*$/;

/** The media type without parameters, lowercased. */
export function baseMediaType(mediaType: string): string {
  const semi = mediaType.indexOf(';');
  return (semi >= 0 ? mediaType.slice(0, semi) : mediaType).trim().toLowerCase();
}

/** `application/json`, any `…+json`, or `*\/*`. */
export function isJsonLike(mediaType: string): boolean {
  return JSON_BASE.test(baseMediaType(mediaType));
}
