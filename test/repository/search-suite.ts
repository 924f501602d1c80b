/**
 * The search cases every ToolRepository must pass: the in-memory BM25 repository and the Postgres one
 * (PGlite and a real server) run the same suite.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolRepository, ToolSearchStrategy } from '../../src/core/repository.js';
import type { Tool } from '../../src/core/types.js';

export const t = (name: string, description: string, tags: string[] = []): Tool => ({
  name,
  description,
  tags,
  inputs: {},
  outputs: {},
  tool_call_template: { call_template_type: 'http' },
});

export const catalog: Tool[] = [
  t('weather.get_current_weather', 'Get the current weather conditions for a city', ['weather']),
  t('weather.get_forecast', 'Get a 7-day weather forecast for a location', ['weather', 'forecast']),
  t('github.create_issue', 'Create a new issue in a GitHub repository', ['github', 'issues']),
  t('github.list_issues', 'List issues of a repository, filtered by state and labels', ['github', 'issues']),
  t('github.create_pull_request', 'Open a pull request from one branch to another', ['github']),
  t('github.search_code', 'Search source code across repositories', ['github', 'search']),
  t('mail.send_email', 'Send an email message to one or more recipients', ['email']),
  t('mail.list_inbox', 'List the messages in the inbox', ['email']),
  t('calendar.create_event', 'Create a calendar event with attendees', ['calendar']),
  t('calendar.list_events', 'List upcoming calendar events', ['calendar']),
  t('fs.read_file', 'Read the contents of a file from disk', ['files']),
  t('fs.write_file', 'Write text to a file on disk, creating it', ['files', 'write']),
  t('translate.translateText', 'Translate text between languages', ['language']),
  t('stocks.getQuote', 'Latest stock price quote for a ticker symbol', ['finance']),
  t('crypto.get_price', 'Current price of a cryptocurrency in USD', ['finance', 'crypto']),
];

/** Query → the tool that must rank first. */
export const rankingCases: [string, string][] = [
  ['what is the weather in Paris right now', 'weather.get_current_weather'],
  ['weather forecast for next week', 'weather.get_forecast'],
  ['open a new github issue', 'github.create_issue'],
  ['list open issues', 'github.list_issues'],
  ['send an email to bob', 'mail.send_email'],
  ['schedule a meeting event in my calendar', 'calendar.create_event'],
  ['read file', 'fs.read_file'],
  ['translate this text to French', 'translate.translateText'],
  ['stock quote for AAPL', 'stocks.getQuote'],
  ['bitcoin crypto price', 'crypto.get_price'],
  ['get_forecast', 'weather.get_forecast'],
  ['pull request', 'github.create_pull_request'],
];

/** Saves the catalog as one manual per name prefix, in catalog order. */
export async function saveCatalog(repo: ToolRepository, tools: readonly Tool[] = catalog): Promise<void> {
  const byManual = new Map<string, Tool[]>();
  for (const tool of tools) {
    const m = tool.name.split('.')[0];
    if (!byManual.has(m)) byManual.set(m, []);
    byManual.get(m)!.push(tool);
  }
  for (const [name, list] of byManual) {
    await repo.saveManual(
      name,
      { name, call_template_type: 'http' },
      { utcp_version: '1.0.0', manual_version: '1.0.0', tools: list },
    );
  }
}

/** Registers the shared search cases for one repository. `create` gets a fresh, empty repository each time. */
export function repositorySearchSuite(
  label: string,
  create: () => Promise<ToolRepository & { close?(): Promise<void> }>,
  extra: { typos?: boolean } = {},
): void {
  describe(`search through the repository: ${label}`, () => {
    let repo: ToolRepository & { close?(): Promise<void> };
    const names = async (q: string, limit: number, tags?: string[]) =>
      (await repo.searchTools(q, { limit, anyOfTagsRequired: tags })).map((x) => x.name);

    beforeAll(async () => {
      repo = await create();
      await saveCatalog(repo);
    }, 120_000); // an embedded engine's first start takes seconds on a loaded machine
    afterAll(async () => {
      await repo?.close?.();
    });

    it.each(rankingCases)('ranks the right tool first for "%s"', async (query, expected) => {
      expect((await names(query, 3))[0]).toBe(expected);
    });

    it('filters by any of the required tags, case-insensitively', async () => {
      expect(await names('create', 10, ['Calendar'])).toEqual(['calendar.create_event']);
    });

    it('returns all matches for limit 0 and registration order for an empty query', async () => {
      expect((await names('list', 0)).length).toBe(3);
      expect(await names('', 2)).toEqual(['weather.get_current_weather', 'weather.get_forecast']);
      expect(await names('', 0, ['files'])).toEqual(['fs.read_file', 'fs.write_file']);
    });

    it('returns whole tools, as saved', async () => {
      const [hit] = await repo.searchTools('bitcoin crypto price', { limit: 1 });
      expect(hit).toEqual(catalog.find((x) => x.name === 'crypto.get_price'));
    });

    it.runIf(extra.typos)('finds names that look like a misspelt query when full text finds nothing', async () => {
      expect((await names('forcast', 3))[0]).toBe('weather.get_forecast');
      expect(await names('forcast', 3, ['email'])).toEqual([]);
    });

    it('forgets removed tools and keeps ranking the rest', async () => {
      const fresh = await create();
      try {
        await saveCatalog(fresh);
        expect(await fresh.removeManual('weather')).toBe(true);
        expect(await fresh.removeManual('weather')).toBe(false);
        expect((await fresh.searchTools('weather forecast', { limit: 5 })).map((x) => x.name)).toEqual([]);
        expect((await fresh.searchTools('issue', { limit: 1 }))[0].name).toBe('github.create_issue');
        expect(await fresh.getTool('weather.get_forecast')).toBeUndefined();
        expect(await fresh.getManualNames()).not.toContain('weather');
      } finally {
        await fresh.close?.();
      }
    });

    it('replaces a manual saved again under the same name', async () => {
      const fresh = await create();
      try {
        await saveCatalog(fresh);
        await fresh.saveManual(
          'weather',
          { name: 'weather', call_template_type: 'http' },
          {
            utcp_version: '1.0.0',
            manual_version: '2.0.0',
            tools: [t('weather.get_alerts', 'Severe weather alerts for a region', ['weather'])],
          },
        );
        expect((await fresh.searchTools('weather', { limit: 0 })).map((x) => x.name)).toEqual(['weather.get_alerts']);
        const stored = await fresh.getManual('weather');
        expect(stored?.manual.manual_version).toBe('2.0.0');
        expect(stored?.manual.tools.map((x) => x.name)).toEqual(['weather.get_alerts']);
        expect((await fresh.getTools()).length).toBe(catalog.length - 2 + 1);
      } finally {
        await fresh.close?.();
      }
    });
  });
}

const WORDS = ['invoice', 'weather', 'forecast', 'refund', 'customer', 'repository', 'commit', 'deploy', 'queue'];
const QUERIES = ['weather forecast', 'refund customer invoice', 'deploy queue', 'commit 17', 'nothing matches this'];

/** `n` tools over a few shared words (every tenth with a second paragraph): large registrations for the index tests. */
export function tools(n: number, variant = ''): Tool[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `m.${WORDS[i % WORDS.length]}_${WORDS[(i * 5 + 2) % WORDS.length]}_${i}`,
    description: `Handles the ${WORDS[(i * 3) % WORDS.length]} of a ${WORDS[(i * 7 + 1) % WORDS.length]} ${variant}(item ${i})${i % 10 === 0 ? `\n\nLonger text about ${WORDS[i % 4]} and more.` : ''}`,
    tags: [WORDS[(i * 2) % WORDS.length]],
    inputs: {},
    outputs: {},
    tool_call_template: { call_template_type: 'http' },
  }));
}

/** The names of the best 20 tools `s` finds for each of a few queries. */
export const ranking = (s: ToolSearchStrategy) => QUERIES.map((q) => s.search(q, 20).map((t) => t.name));
