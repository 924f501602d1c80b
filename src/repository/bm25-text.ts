/**
 * The text side of search (docs/design/manual-format.md#search): how names, descriptions and tags split into terms.
 * The BM25 index writer and every query use this one tokenizer, and the PostgreSQL catalog stores its terms.
 */

const STOPWORDS = new Set([
  'a',
  'an',
  'the',
  'of',
  'to',
  'for',
  'and',
  'or',
  'in',
  'on',
  'at',
  'by',
  'with',
  'from',
  'is',
  'are',
  'be',
  'it',
  'its',
  'this',
  'that',
  'as',
  'me',
  'my',
  'i',
  'you',
  'your',
  'can',
  'will',
  'into',
  'about',
  'which',
  'what',
]);

/** A light English stemmer: enough to match "forecasts" with "forecast" and "listing" with "list". */
export function stem(word: string): string {
  const n = word.length;
  if (n <= 3) return word;
  if (word.endsWith('ies') && n > 4) return word.slice(0, -3) + 'y';
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ing') && n > 5) return word.slice(0, -3);
  if (word.endsWith('ed') && n > 4 && !word.endsWith('eed')) return word.slice(0, -2);
  if (word.endsWith('es') && n > 4 && /(?:ch|sh|x|z|ss)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us') && !word.endsWith('is'))
    return word.slice(0, -1);
  return word;
}

/** The weight of a description's later paragraphs, relative to its first. */
export const DESCRIPTION_REST_WEIGHT = 0.1;

/**
 * A description's first paragraph (its summary) and the rest. Search weighs the rest far less: an OpenAPI tool's
 * description is its summary followed by the operation's long text (docs/design/openapi.md#naming), and that text,
 * counted in full, buried "List commits" under every tool that mentions commits (docs/design/manual-format.md#search).
 */
export function splitDescription(description: string): [head: string, rest: string] {
  const cut = description.indexOf('\n\n');
  return cut === -1 ? [description, ''] : [description.slice(0, cut), description.slice(cut + 2)];
}

/**
 * Splits text into search terms: camelCase and snake_case split, lowercased, stop words dropped, stemmed.
 * A hand-written scanner (ASCII fast path, Unicode letters and digits kept) because registration tokenizes every tool.
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  if (!text) return out;
  const bounds = new Int32Array(text.length * 2);
  const count = wordBounds(text, bounds);
  for (let k = 0; k < count; k += 2) pushTerm(out, text.slice(bounds[k], bounds[k + 1]));
  return out;
}

/** The class of each ASCII character: 0 not in a word, 1 a lower-case letter or a digit, 2 an upper-case letter. */
const ASCII_CLASS = new Uint8Array(128);
for (let c = 48; c <= 57; c++) ASCII_CLASS[c] = 1;
for (let c = 97; c <= 122; c++) ASCII_CLASS[c] = 1;
for (let c = 65; c <= 90; c++) ASCII_CLASS[c] = 2;

/** The class (as ASCII_CLASS) of a character outside ASCII: Unicode letters and digits are word characters. */
function unicodeClass(ch: string): number {
  if (!/[\p{L}\p{N}]/u.test(ch)) return 0;
  return ch.toLowerCase() !== ch ? 2 : 1;
}

/**
 * Finds the raw words of `text`, in order: runs of letters and digits, split at lower→Upper (camelCase) boundaries.
 * Writes each word's start and end into `bounds` (which holds `2 × text.length` numbers at least) and returns how
 * many numbers it wrote. `tokenize` and the index writer share it, so both split text the same way; it calls nothing
 * per word, so the writer's per-word work runs in the writer's own loop (docs/design/performance.md#cold-index).
 */
export function wordBounds(text: string, bounds: Int32Array): number {
  let count = 0;
  let start = -1;
  let prev = 0;
  const end = text.length;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    const cls = c < 128 ? ASCII_CLASS[c] : unicodeClass(text[i]);
    // A word ends at a non-word character or at a lower→Upper (camelCase) boundary.
    if (start !== -1 && (cls === 0 || (cls === 2 && prev === 1))) {
      bounds[count++] = start;
      bounds[count++] = i;
      start = -1;
    }
    if (cls !== 0 && start === -1) start = i;
    prev = cls;
  }
  if (start !== -1) {
    bounds[count++] = start;
    bounds[count++] = end;
  }
  return count;
}

/** The term a raw word indexes as, or `undefined` for a word search ignores (too short, a stop word). */
export function termOf(raw: string): string | undefined {
  if (raw.length < 2) return undefined;
  const word = raw.toLowerCase();
  return STOPWORDS.has(word) ? undefined : stem(word);
}

function pushTerm(out: string[], raw: string): void {
  const term = termOf(raw);
  if (term !== undefined) out.push(term);
}
