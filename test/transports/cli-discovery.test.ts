import { describe, expect, it } from 'vitest';
import { CliExitError } from '../../src/core/errors.js';
import { parseCallOutput, parseDiscoveryOutput } from '../../src/transports/cli/parse-output.js';
import { cliTemplate, makeHarness, nodeFixture } from '../fixtures/cli/harness.js';

describe('cli discovery', () => {
  it('returns the manual printed by a command as is', async () => {
    const h = makeHarness();
    const manual = (await h.discover(cliTemplate(`${nodeFixture('print-manual.mjs')} --manual`))) as any;
    expect(manual.utcp_version).toBe('1.0.1');
    expect(manual.manual_version).toBe('2.0.0');
    expect(manual.tools.map((t: any) => t.name)).toEqual(['upper', 'reverse']);
    expect(manual.tools[0].tool_call_template.call_template_type).toBe('cli');
  });

  it('assembles a manual (manual_version 0.0.0) from a tool array', async () => {
    const h = makeHarness();
    const manual = (await h.discover(cliTemplate(`${nodeFixture('print-manual.mjs')} --tools`))) as any;
    expect(manual.manual_version).toBe('0.0.0');
    expect(manual.tools.map((t: any) => t.name)).toEqual(['upper', 'reverse']);
  });

  it('assembles a manual from a single tool object', async () => {
    const h = makeHarness();
    const manual = (await h.discover(cliTemplate(`${nodeFixture('print-manual.mjs')} --one`))) as any;
    expect(manual).toMatchObject({ manual_version: '0.0.0', tools: [{ name: 'upper' }] });
  });

  it('collects one-tool-per-line output mixed with log lines', async () => {
    const h = makeHarness();
    const manual = (await h.discover(cliTemplate(`${nodeFixture('print-manual.mjs')} --lines`))) as any;
    expect(manual.manual_version).toBe('0.0.0');
    expect(manual.tools.map((t: any) => t.name)).toEqual(['upper', 'reverse']);
  });

  it('fails when the output holds no manual or tool', async () => {
    const h = makeHarness();
    await expect(h.discover(cliTemplate(`${nodeFixture('print-manual.mjs')} --nothing`))).rejects.toMatchObject({
      code: 'INVALID_MANUAL',
      message: expect.stringContaining('cli discovery for manual demo'),
    });
  });

  it('fails with CliExitError when the discovery command exits non-zero', async () => {
    const h = makeHarness();
    await expect(h.discover(cliTemplate('echo \'{"tools": []}\'; exit 2'))).rejects.toBeInstanceOf(CliExitError);
  });

  it('refuses argument placeholders in discovery commands before running them', async () => {
    const h = makeHarness();
    await expect(h.discover(cliTemplate('echo UTCP_ARG_x_UTCP_END'))).rejects.toMatchObject({
      code: 'INVALID_MANUAL',
      message: expect.stringContaining('UTCP_ARG_x_UTCP_END'),
    });
  });

  it('runs every discovery step in one shell and uses the appended outputs', async () => {
    const h = makeHarness();
    const template = cliTemplate(['export MODE=--tools', `${nodeFixture('print-manual.mjs')} "$MODE"`]);
    expect(((await h.discover(template)) as any).tools).toHaveLength(2);
  });

  it('discovered tools can be called through their own templates', async () => {
    const h = makeHarness();
    const manual = (await h.discover(cliTemplate(`${nodeFixture('print-manual.mjs')} --manual`))) as any;
    const upper = manual.tools[0];
    expect(await h.call(upper.tool_call_template, { text: 'it works; rm -rf /' })).toBe('IT WORKS; RM -RF /');
  });
});

describe('parseDiscoveryOutput', () => {
  it('takes the first line with a tools array as the manual', () => {
    const out = '{"name": "a"}\n{"tools": [{"name": "m"}], "manual_version": "3"}\n{"tools": []}';
    expect(parseDiscoveryOutput(out, 'x')).toEqual({ tools: [{ name: 'm' }], manual_version: '3' });
  });

  it('skips unparsable brace lines', () => {
    expect(parseDiscoveryOutput('{oops}\n{"name": "t"}', 'x')).toEqual({
      utcp_version: '1.0.0',
      manual_version: '0.0.0',
      tools: [{ name: 't' }],
    });
  });

  it('fails on empty output', () => {
    expect(() => parseDiscoveryOutput('  \n', 'x')).toThrow(/no UTCP manual/);
  });

  it('fails on JSON that is neither a manual, a tool list nor a tool', () => {
    expect(() => parseDiscoveryOutput('{"hello": "world"}', 'x')).toThrow(/no UTCP manual/);
  });
});

describe('parseCallOutput', () => {
  it('parses objects and arrays, leaves everything else as trimmed text', () => {
    expect(parseCallOutput(' {"a":1}\n')).toEqual({ a: 1 });
    expect(parseCallOutput('[1]')).toEqual([1]);
    expect(parseCallOutput('[1] trailing')).toBe('[1] trailing');
    expect(parseCallOutput('true')).toBe('true');
    expect(parseCallOutput('\n')).toBe('');
  });
});
