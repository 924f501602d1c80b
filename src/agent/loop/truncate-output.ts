export interface TruncatedOutput {
  text: string;
  truncated: boolean;
  /** Characters (UTF-16 code units) removed. */
  cutChars: number;
}

/** Share of the budget given to the start of the output; the rest goes to its end. */
const HEAD_SHARE = 0.6;

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Cuts `text` to at most `maxChars` characters, keeping its head and tail and saying what was cut in between,
 * so one tool cannot flood the model's context. Never splits a surrogate pair. A budget smaller than the note yields the note alone.
 */
export function truncateOutput(text: string, maxChars: number): TruncatedOutput {
  if (!(maxChars >= 0) || text.length <= maxChars) return { text, truncated: false, cutChars: 0 };
  const note = (cut: number) => `\n\n[… ${cut} of ${text.length} characters cut …]\n\n`;
  const budget = Math.max(0, maxChars - note(text.length).length);
  let head = Math.floor(budget * HEAD_SHARE);
  let tailStart = text.length - (budget - head);
  if (head > 0 && isHighSurrogate(text.charCodeAt(head - 1))) head -= 1;
  if (tailStart < text.length && tailStart > 0 && isHighSurrogate(text.charCodeAt(tailStart - 1))) tailStart += 1;
  const cut = tailStart - head;
  return { text: `${text.slice(0, head)}${note(cut)}${text.slice(tailStart)}`, truncated: true, cutChars: cut };
}
