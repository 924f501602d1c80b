import { describe, expect, it } from 'vitest';
import { Bm25Search, tokenize } from '../../src/repository/bm25-search.js';
import { WordMatchSearch } from '../../src/repository/word-match-search.js';
import type { Tool } from '../../src/core/types.js';

const t = (name: string, description: string, tags: string[] = []): Tool => ({
  name, description, tags, inputs: {}, outputs: {}, tool_call_template: { call_template_type: 'http' },
});

const catalog: Tool[] = [
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

describe('BM25 search', () => {
  const search = new Bm25Search();
  search.add(catalog);

  it.each([
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
  ])('ranks the right tool first for "%s"', (query, expected) => {
    expect(search.search(query, 3)[0]?.name).toBe(expected);
  });

  it('filters by any of the required tags, case-insensitively', () => {
    expect(search.search('create', 10, ['Calendar']).map((x) => x.name)).toEqual(['calendar.create_event']);
  });

  it('returns all matches for limit 0 and registration order for an empty query', () => {
    expect(search.search('list', 0).length).toBe(3);
    expect(search.search('', 2).map((x) => x.name)).toEqual(['weather.get_current_weather', 'weather.get_forecast']);
    expect(search.search('', 0, ['files']).map((x) => x.name)).toEqual(['fs.read_file', 'fs.write_file']);
  });

  it('forgets removed tools and keeps ranking the rest', () => {
    const s = new Bm25Search();
    s.add(catalog);
    s.remove(catalog.filter((x) => x.name.startsWith('weather.')));
    expect(s.search('weather forecast', 5).map((x) => x.name)).toEqual([]);
    expect(s.search('issue', 1)[0].name).toBe('github.create_issue');
  });

  it('stays correct across compaction after many removals', () => {
    const s = new Bm25Search();
    const many = Array.from({ length: 3000 }, (_, i) => t(`m${i % 3}.tool_${i}`, `Tool number ${i} about ${i % 2 ? 'apples' : 'pears'}`));
    s.add(many);
    s.remove(many.slice(0, 2500));
    const hits = s.search('apples', 0);
    expect(hits.length).toBe(250);
    expect(hits.every((h) => Number(h.name.split('_')[1]) >= 2500)).toBe(true);
  });

  it('tokenizes camelCase, snake_case and plurals', () => {
    expect(tokenize('getWeatherForecasts for_the_cities')).toEqual(['get', 'weather', 'forecast', 'city']);
  });
});

describe('tag_and_description_word_match (official strategy)', () => {
  const search = new WordMatchSearch();
  search.add(catalog);

  it('scores tags, description words and name tokens', () => {
    expect(search.search('weather forecast', 1)[0].name).toBe('weather.get_forecast');
    expect(search.search('send email', 1)[0].name).toBe('mail.send_email');
  });

  it('keeps zero-score tools at the end and returns all for limit 0', () => {
    expect(search.search('zzz', 0)).toHaveLength(catalog.length);
  });
});
