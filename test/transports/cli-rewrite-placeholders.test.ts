import { describe, expect, it } from 'vitest';
import { argEnvName, rewritePlaceholders } from '../../src/transports/cli/rewrite-placeholders.js';

const N = '0123456789abcdef';
const V = (name: string) => argEnvName(N, name);
const bash = (cmd: string) => rewritePlaceholders(cmd, 'bash', N);
const ps = (cmd: string) => rewritePlaceholders(cmd, 'powershell', N);

describe('bash placeholder rewriting', () => {
  it('names the variable __UTCP_ARG_<nonce>_<name>', () => {
    expect(V('file')).toBe('__UTCP_ARG_0123456789abcdef_file');
  });

  it('references an unquoted placeholder as "$V"', () => {
    expect(bash('mytool UTCP_ARG_x_UTCP_END').text).toBe(`mytool "$${V('x')}"`);
  });

  it('references a placeholder inside double quotes as ${V}', () => {
    expect(bash('mytool "Hi UTCP_ARG_x_UTCP_END!"').text).toBe(`mytool "Hi \${${V('x')}}!"`);
  });

  it('closes, double-quotes and reopens inside single quotes', () => {
    expect(bash("mytool 'Hi UTCP_ARG_x_UTCP_END!'").text).toBe(`mytool 'Hi '"$${V('x')}"'!'`);
  });

  it('does not let an escaped \\" flip the double-quote state', () => {
    expect(bash('echo "a \\" UTCP_ARG_x_UTCP_END"').text).toBe(`echo "a \\" \${${V('x')}}"`);
  });

  it("does not let an escaped \\' outside quotes open a single-quoted string", () => {
    expect(bash("echo don\\'t UTCP_ARG_x_UTCP_END").text).toBe(`echo don\\'t "$${V('x')}"`);
  });

  it('does not let an escaped \\" outside quotes open a double-quoted string', () => {
    expect(bash('echo \\" UTCP_ARG_x_UTCP_END').text).toBe(`echo \\" "$${V('x')}"`);
  });

  it('treats \\\\ inside double quotes as one escaped backslash', () => {
    expect(bash('echo "a\\\\" UTCP_ARG_x_UTCP_END').text).toBe(`echo "a\\\\" "$${V('x')}"`);
  });

  it('treats a backslash inside single quotes as literal', () => {
    expect(bash("echo 'a\\' UTCP_ARG_x_UTCP_END").text).toBe(`echo 'a\\' "$${V('x')}"`);
  });

  it('ends the name at the first _UTCP_END (lazy match)', () => {
    const r = bash('x UTCP_ARG_a_UTCP_END123suffix');
    expect(r.text).toBe(`x "$${V('a')}"123suffix`);
    expect(r.names).toEqual(['a']);
  });

  it('ends the name lazily inside double quotes too', () => {
    expect(bash('x "UTCP_ARG_a_UTCP_END123suffix"').text).toBe(`x "\${${V('a')}}123suffix"`);
  });

  it('accepts underscores inside names', () => {
    const r = bash('x UTCP_ARG_file_name_UTCP_END');
    expect(r.names).toEqual(['file_name']);
    expect(r.text).toBe(`x "$${V('file_name')}"`);
  });

  it('shares one nonce across several placeholders composed in one double-quoted string', () => {
    const r = bash('echo "UTCP_ARG_a_UTCP_END-UTCP_ARG_b_UTCP_END" UTCP_ARG_a_UTCP_END');
    expect(r.text).toBe(`echo "\${${V('a')}}-\${${V('b')}}" "$${V('a')}"`);
    expect(r.names).toEqual(['a', 'b']);
  });

  it('leaves text without placeholders unchanged', () => {
    const cmd = `echo "$HOME" '$PATH' $CMD_0_OUTPUT \${X:-d} $(date) \`id\``;
    expect(bash(cmd)).toEqual({ text: cmd, names: [], variables: [] });
  });

  it('leaves a backslash-escaped placeholder outside quotes literal', () => {
    expect(bash('echo \\UTCP_ARG_x_UTCP_END')).toEqual({
      text: 'echo \\UTCP_ARG_x_UTCP_END',
      names: [],
      variables: [],
    });
  });

  it('keeps a literal backslash before a double-quoted placeholder from escaping the reference', () => {
    expect(bash('echo "C:\\UTCP_ARG_x_UTCP_END"').text).toBe(`echo "C:\\\\\${${V('x')}}"`);
  });

  it('leaves placeholders in comments alone, and an apostrophe in a comment does not open a quote', () => {
    const r = bash("true # don't UTCP_ARG_x_UTCP_END\necho UTCP_ARG_y_UTCP_END");
    expect(r.text).toBe(`true # don't UTCP_ARG_x_UTCP_END\necho "$${V('y')}"`);
    expect(r.names).toEqual(['y']);
  });

  it('does not treat # inside a word as a comment', () => {
    expect(bash('echo a#UTCP_ARG_x_UTCP_END').text).toBe(`echo a#"$${V('x')}"`);
  });

  it('resets the quote state inside "$( … )" and restores it afterwards', () => {
    expect(bash('echo "$(printf %s UTCP_ARG_x_UTCP_END) UTCP_ARG_y_UTCP_END"').text).toBe(
      `echo "$(printf %s "$${V('x')}") \${${V('y')}}"`,
    );
  });

  it('tracks nested parentheses inside $( … )', () => {
    expect(bash('echo "$( (echo UTCP_ARG_x_UTCP_END) ) UTCP_ARG_y_UTCP_END"').text).toBe(
      `echo "$( (echo "$${V('x')}") ) \${${V('y')}}"`,
    );
  });

  it('resets the quote state inside backticks', () => {
    expect(bash('echo "`printf %s UTCP_ARG_x_UTCP_END`"').text).toBe(`echo "\`printf %s "$${V('x')}"\`"`);
  });

  it("reopens an ANSI-C $'…' string around the reference", () => {
    expect(bash("echo $'a\\'UTCP_ARG_x_UTCP_END'").text).toBe(`echo $'a\\''"$${V('x')}"$''`);
  });

  it('references placeholders in an unquoted here-document as ${V}', () => {
    expect(bash("cat <<EOF\nit's UTCP_ARG_x_UTCP_END\nEOF\necho UTCP_ARG_y_UTCP_END").text).toBe(
      `cat <<EOF\nit's \${${V('x')}}\nEOF\necho "$${V('y')}"`,
    );
  });

  it('handles <<- here-documents with tab-indented delimiters and several here-documents on one line', () => {
    expect(bash("cat <<-A - <<B\n\tUTCP_ARG_x_UTCP_END\n\tA\nit's\nB\necho UTCP_ARG_y_UTCP_END").text).toBe(
      `cat <<-A - <<B\n\t\${${V('x')}}\n\tA\nit's\nB\necho "$${V('y')}"`,
    );
  });

  it('refuses a placeholder inside a here-document with a quoted delimiter', () => {
    expect(() => bash("cat <<'EOF'\nUTCP_ARG_x_UTCP_END\nEOF")).toThrow(/quoted delimiter/);
  });

  it('does not mistake a here-string or an arithmetic shift for a here-document', () => {
    expect(bash('cat <<< UTCP_ARG_x_UTCP_END').text).toBe(`cat <<< "$${V('x')}"`);
    expect(bash('echo $((1 << 2)) UTCP_ARG_x_UTCP_END').text).toBe(`echo $((1 << 2)) "$${V('x')}"`);
    expect(bash('(( y = 1 << 2 )); echo UTCP_ARG_x_UTCP_END').text).toBe(`(( y = 1 << 2 )); echo "$${V('x')}"`);
    expect(bash('(( y = 1 << $n ))\necho UTCP_ARG_x_UTCP_END').text).toBe(`(( y = 1 << $n ))\necho "$${V('x')}"`);
  });

  it('never copies anything but references into the text', () => {
    const r = bash(`a UTCP_ARG_p_UTCP_END "b UTCP_ARG_p_UTCP_END" 'c UTCP_ARG_p_UTCP_END'`);
    expect(r.text).not.toContain('UTCP_ARG_p_UTCP_END');
  });
});

describe('PowerShell placeholder rewriting', () => {
  it('references an unquoted placeholder as ${env:V}', () => {
    expect(ps('mytool UTCP_ARG_x_UTCP_END').text).toBe(`mytool \${env:${V('x')}}`);
  });

  it('references a double-quoted placeholder as ${env:V}', () => {
    expect(ps('mytool "Hi UTCP_ARG_x_UTCP_END!"').text).toBe(`mytool "Hi \${env:${V('x')}}!"`);
  });

  it('refuses a single-quoted placeholder', () => {
    expect(() => ps("mytool 'Hi UTCP_ARG_x_UTCP_END'")).toThrow(/single-quoted/);
  });

  it('refuses a placeholder in a single-quoted here-string', () => {
    expect(() => ps("Write-Output @'\nUTCP_ARG_x_UTCP_END\n'@")).toThrow(/single-quoted/);
  });

  it('preserves a backtick-escaped quote without flipping the state', () => {
    expect(ps('echo "a `" UTCP_ARG_x_UTCP_END"').text).toBe(`echo "a \`" \${env:${V('x')}}"`);
    expect(ps("echo `' UTCP_ARG_x_UTCP_END").text).toBe(`echo \`' \${env:${V('x')}}`);
  });

  it('honours doubled quotes inside strings (\'\' and "")', () => {
    expect(ps("echo 'it''s' UTCP_ARG_x_UTCP_END").text).toBe(`echo 'it''s' \${env:${V('x')}}`);
    expect(ps('echo "say ""hi"" UTCP_ARG_x_UTCP_END"').text).toBe(`echo "say ""hi"" \${env:${V('x')}}"`);
  });

  it('treats typographic quotes as quotes', () => {
    expect(() => ps('echo \u2018UTCP_ARG_x_UTCP_END\u2019')).toThrow(/single-quoted/);
  });

  it('expands placeholders in a double-quoted here-string', () => {
    expect(ps('$t = @"\nit\'s UTCP_ARG_x_UTCP_END\n"@').text).toBe(`$t = @"\nit's \${env:${V('x')}}\n"@`);
  });

  it('leaves placeholders in comments alone', () => {
    expect(ps("# it's UTCP_ARG_x_UTCP_END\n<# UTCP_ARG_y_UTCP_END #> echo UTCP_ARG_z_UTCP_END")).toEqual({
      text: `# it's UTCP_ARG_x_UTCP_END\n<# UTCP_ARG_y_UTCP_END #> echo \${env:${V('z')}}`,
      names: ['z'],
      variables: [],
    });
  });

  it('ends the name at the first _UTCP_END', () => {
    expect(ps('x UTCP_ARG_a_UTCP_END123suffix').text).toBe(`x \${env:${V('a')}}123suffix`);
  });
});
