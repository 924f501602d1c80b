/**
 * Tools whose text holds what COPY's text format and SQL literals must escape (tabs, line breaks, backslashes, `\N`,
 * `\.`, quotes, non-ASCII), and the check that a repository gives them back byte for byte and finds them.
 */
import { expect } from 'vitest';
import type { PostgresToolRepository } from '../../../src/repository/postgres/postgres-repository.js';

export const oddTool = (name: string, description: string, tags: string[] = []) => ({
  name,
  description,
  tags,
  inputs: { type: 'object', properties: { 'a\tb': { type: 'string', description: 'back\\slash "quoted"\n\r' } } },
  outputs: {},
  tool_call_template: { call_template_type: 'http', url: 'http://127.0.0.1:1/x?a=\\N', http_method: 'GET' },
});

export async function expectOddToolsKept(repo: PostgresToolRepository): Promise<void> {
  const tools = [
    oddTool('m.tab\there', 'line one\nline two\r\nwith a \\ backslash and \\N and \\.', [
      'Tag\tOne',
      'back\\slash',
      'q"uote',
    ]),
    oddTool('m.\\N', '\\.'),
    oddTool('m.ünïcödé_wörds', 'Grüße, 天気予報, emoji 🌦 and \u2028 separator', ['天気']),
    oddTool('m.empty', ''),
  ];
  await repo.saveManual(
    'm',
    { name: 'm', call_template_type: 'http' },
    { utcp_version: '1.0.0', manual_version: '1', tools },
  );
  const stored = await repo.getManual('m');
  expect(JSON.stringify(stored?.manual.tools)).toBe(JSON.stringify(tools));
  expect(await repo.getTool('m.tab\there')).toEqual(tools[0]);
  expect((await repo.searchTools('backslash', { limit: 5 })).map((t) => t.name)).toEqual(['m.tab\there']);
  expect((await repo.searchTools('grüße', { limit: 5 })).map((t) => t.name)).toEqual(['m.ünïcödé_wörds']);
  expect((await repo.searchTools('', { limit: 0, anyOfTagsRequired: ['tag\tone'] })).map((t) => t.name)).toEqual([
    'm.tab\there',
  ]);
}
