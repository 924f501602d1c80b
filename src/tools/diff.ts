/** Unified diffs of what a write changed (for the model and for approval UIs), via the `diff` package. */

const MAX_DIFF_CHARS = 20_000;

/** A unified diff from `before` to `after` (`null` for a missing file), cut at 20,000 characters. */
export async function unifiedDiff(shown: string, before: string | null, after: string | null): Promise<string> {
  const { createTwoFilesPatch } = await import('diff');
  const patch = createTwoFilesPatch(
    before === null ? '/dev/null' : `a/${shown}`,
    after === null ? '/dev/null' : `b/${shown}`,
    before ?? '',
    after ?? '',
    undefined,
    undefined,
    { context: 3 },
  );
  // The package starts with an "=====" separator line; a plain unified diff starts at "---".
  const text = patch.slice(patch.indexOf('--- ')).trimEnd();
  return text.length > MAX_DIFF_CHARS
    ? `${text.slice(0, MAX_DIFF_CHARS)}\n… (diff cut at ${MAX_DIFF_CHARS} characters)`
    : text;
}
