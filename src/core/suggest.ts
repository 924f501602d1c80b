/**
 * "Did you mean" for tool names: exact matches of the short name (without the manual prefix) first,
 * then names within a small edit distance. Cheap enough for catalogs of 100k tools (one pass, early exits).
 */

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions), stopping early past `max`. */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const prevPrev: number[] = new Array(b.length + 1).fill(0);
  let prev: number[] = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur: number[] = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prevPrev[j - 2] + 1);
      cur[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return max + 1;
    for (let j = 0; j <= b.length; j++) prevPrev[j] = prev[j];
    prev = cur;
  }
  return prev[b.length];
}

const shortName = (full: string) => full.slice(full.indexOf('.') + 1);

/** ` (did you mean "x"?)` for the closest of `known` within two edits of `wanted`, else ''. */
export function didYouMean(wanted: string, known: Iterable<string>): string {
  let best: string | undefined;
  let bestDistance = 3;
  for (const k of known) {
    const d = editDistance(wanted.toLowerCase(), k.toLowerCase(), bestDistance);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best === undefined ? '' : ` (did you mean "${best}"?)`;
}

/** Up to `limit` registered names that the caller probably meant by `wanted`, best first. */
export function suggestToolNames(wanted: string, names: Iterable<string>, limit = 3): string[] {
  const lower = wanted.toLowerCase();
  const exactShort: string[] = [];
  const scored: Array<{ name: string; d: number }> = [];
  for (const name of names) {
    const nameLower = name.toLowerCase();
    const short = shortName(nameLower);
    if (short === lower || nameLower.endsWith(`.${lower}`)) {
      exactShort.push(name);
      continue;
    }
    // Allow roughly one typo per four characters, at least two.
    const budget = Math.max(2, Math.floor(lower.length / 4));
    const d = Math.min(
      editDistance(lower, nameLower, budget),
      lower.includes('.') ? budget + 1 : editDistance(lower, short, budget),
    );
    if (d <= budget) scored.push({ name, d });
  }
  if (exactShort.length) return exactShort.sort().slice(0, limit);
  scored.sort((x, y) => x.d - y.d || x.name.localeCompare(y.name));
  return scored.slice(0, limit).map((s) => s.name);
}
