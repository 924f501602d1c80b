/**
 * The search columns of a tool row, built in JavaScript so one save sends ready values and the server only parses
 * them (docs/design/repository-postgres.md#bulk-insert): the weighted `tsvector` as a literal, the lowercased tags
 * as an array literal, and the name's words for the typo vocabulary.
 */
import type { Tool } from '../../core/types.js';
import { splitDescription, tokenize } from '../bm25-text.js';

/**
 * Version of how tool rows are derived from a tool (terms, weights, literals). A save whose tools are byte for byte
 * the stored ones keeps the stored rows; this number is part of that fingerprint, so bump it whenever the derived
 * columns change (including the tokenizer's behaviour), and every manual is rewritten on its next save.
 */
export const DOCUMENT_FORMAT = 2;

/** PostgreSQL's limits: positions 1..16383, at most 255 kept per lexeme, a lexeme under 2048 bytes, 1 MB in all. */
const MAX_POS = 16383;
const MAX_POSITIONS = 255;
const MAX_LEXEME_BYTES = 2046;
/** Far below the 1 MB a tsvector may hold (3 bytes a character at most); words past it are left out of the index (they stay in the tool). */
const MAX_DOC_CHARS = 200_000;
const WEIGHTS = ['A', 'B', 'C', ''] as const;

/**
 * The literal of `setweight(to_tsvector('simple', s0), 'A') || … || setweight(to_tsvector('simple', s3), 'D')` for
 * four lists of terms: each term takes the next position, each section's positions continue after the previous
 * one's (as `||` shifts them), repeated terms gather their positions.
 */
export function tsvectorLiteral(sections: readonly (readonly string[])[]): string {
  // term → its positions so far ("1A,4A,9C") and how many
  const positions = new Map<string, string>();
  const counts = new Map<string, number>();
  let chars = 0;
  let offset = 0;
  for (let s = 0; s < sections.length; s++) {
    const weight = WEIGHTS[s];
    let pos = 0;
    for (const term of sections[s]) {
      const seen = counts.get(term);
      if (seen === undefined) {
        // A character takes at most 3 bytes here (terms are letters and digits), so measure bytes only when it matters.
        if (term.length * 3 > MAX_LEXEME_BYTES && Buffer.byteLength(term) > MAX_LEXEME_BYTES) continue;
        if (chars + term.length > MAX_DOC_CHARS) continue;
        chars += term.length;
      }
      pos++;
      const p = `${Math.min(offset + pos, MAX_POS)}${weight}`;
      if (seen === undefined) {
        positions.set(term, p);
        counts.set(term, 1);
      } else if (seen < MAX_POSITIONS) {
        positions.set(term, `${positions.get(term)},${p}`);
        counts.set(term, seen + 1);
      }
    }
    offset = Math.min(offset + pos, MAX_POS);
  }
  let out = '';
  // Terms are letters and digits only (see tokenize), so quoting needs no escapes.
  for (const [term, p] of positions) out += out === '' ? `'${term}':${p}` : ` '${term}':${p}`;
  return out;
}

/** A `text[]` literal: every element double-quoted, `"` and `\` escaped. */
export function textArrayLiteral(items: readonly string[]): string {
  let out = '{';
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out += ',';
    const item = items[i];
    out += item.includes('"') || item.includes('\\') ? `"${item.replace(/["\\]/g, '\\$&')}"` : `"${item}"`;
  }
  return `${out}}`;
}

/** The search columns of one tool and the name words it adds to the typo vocabulary. */
export interface ToolDocument {
  tags: string;
  doc: string;
  nameTerms: string[];
}

/**
 * Weighted terms of a tool: its bare name (A), tags (B), the first paragraph of its description (C) and manual name
 * (D), from the same tokenizer
 * as the in-memory search, so both stores agree on what a word is.
 */
export function toolDocument(tool: Tool, terms: TermCache = new Map()): ToolDocument {
  const dot = tool.name.indexOf('.');
  const bare = dot === -1 ? tool.name : tool.name.slice(dot + 1);
  const tags = (tool.tags ?? []).map(String);
  const nameTerms = tokenize(bare);
  // Only the first paragraph is indexed: ts_rank's length normalisation counts every indexed word, so a long text
  // would sink the tool (docs/design/repository-postgres.md#search); the in-memory search keeps the rest at a low weight.
  const [head] = splitDescription(typeof tool.description === 'string' ? tool.description : '');
  return {
    tags: textArrayLiteral(tags.map((t) => t.toLowerCase())),
    doc: tsvectorLiteral([
      nameTerms,
      tags.length === 1 ? cachedTerms(tags[0], terms) : tags.flatMap((t) => cachedTerms(t, terms)),
      tokenize(head),
      dot === -1 ? [] : cachedTerms(tool.name.slice(0, dot), terms),
    ]),
    nameTerms,
  };
}

/** Terms of tags and manual names, which repeat across a manual's tools: one cache per save. */
export type TermCache = Map<string, readonly string[]>;

function cachedTerms(text: string, cache: TermCache): readonly string[] {
  let terms = cache.get(text);
  if (terms === undefined) {
    terms = tokenize(text);
    cache.set(text, terms);
  }
  return terms;
}

/** Name terms worth matching misspellings against: not pure numbers (an id in a name is no word). */
export function isVocabularyTerm(term: string): boolean {
  return term.length >= 3 && !/^\d+$/.test(term) && Buffer.byteLength(term) <= MAX_LEXEME_BYTES;
}
