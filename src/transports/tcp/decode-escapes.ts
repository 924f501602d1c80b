/**
 * Decodes the escape sequences of a TCP `message_delimiter` (docs/design/transports.md#tcp):
 * `\n \r \t \0 \\ \xHH \uHHHH`. Any other backslash sequence is kept as written.
 */
export function decodeEscapes(text: string): string {
  return text.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|[nrt0\\])/g, (_m, seq: string) => {
    switch (seq[0]) {
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case '0':
        return '\0';
      case '\\':
        return '\\';
      default:
        return String.fromCharCode(parseInt(seq.slice(1), 16));
    }
  });
}
