import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { DotenvSource, parseDotenv } from '../../src/core/dotenv.js';
import { UtcpVariableNotFoundError } from '../../src/core/errors.js';
import {
  VariableResolver,
  collectTemplateVariables,
  namespacedKey,
  substituteTemplate,
  deferredVariables,
} from '../../src/core/variables.js';

describe('namespacing', () => {
  it.each([
    ['weather', 'API_KEY', 'weather_API_KEY'],
    ['weather_api', 'API_KEY', 'weather__api_API_KEY'],
    ['web_scraper', 'TOKEN', 'web__scraper_TOKEN'],
    ['manual_1', 'API_KEY', 'manual__1_API_KEY'],
  ])('%s + %s → %s', (manual, name, key) => expect(namespacedKey(manual, name)).toBe(key));
});

describe('substituteTemplate', () => {
  const resolver = new VariableResolver({ m_TOKEN: 'secret-token', m_HOST: 'api.example.com', m_E: '' }, [], {});

  it('replaces braced and bare references on a copy', () => {
    const tpl = { call_template_type: 'http', url: 'https://$HOST/x', headers: { Authorization: 'Bearer ${TOKEN}' } };
    const out = substituteTemplate(tpl, 'm', resolver);
    expect(out).toEqual({
      call_template_type: 'http',
      url: 'https://api.example.com/x',
      headers: { Authorization: 'Bearer secret-token' },
    });
    expect(tpl.headers.Authorization).toBe('Bearer ${TOKEN}');
  });

  it('treats an empty config value as found', () => {
    expect(substituteTemplate({ call_template_type: 'http', url: 'x${E}y' }, 'm', resolver).url).toBe('xy');
  });

  it('does not treat $5, ${X:-d} or $(cmd) as variables', () => {
    const out = substituteTemplate({ call_template_type: 'http', url: 'costs $5 ${X:-d} $(id)' }, 'm', resolver);
    expect(out.url).toBe('costs $5 ${X:-d} $(id)');
  });

  it('leaves $ref strings alone but substitutes $refresh_token', () => {
    const r = new VariableResolver({ m_refresh_token: 'R' }, [], {});
    expect(substituteTemplate({ call_template_type: 'x', a: '{"$ref":"#/$defs/A"} $HOST' }, 'm', r).a).toBe(
      '{"$ref":"#/$defs/A"} $HOST',
    );
    expect(substituteTemplate({ call_template_type: 'x', a: '$refresh_token' }, 'm', r).a).toBe('R');
  });

  it('never substitutes text content or auth_tools', () => {
    const tpl = {
      call_template_type: 'text',
      content: 'uses ${TOKEN}',
      auth_tools: { auth_type: 'api_key', api_key: '${MISSING}' },
    };
    expect(substituteTemplate(tpl, 'm', resolver)).toBe(tpl);
  });

  it('in cli commands only braced references are variables and CMD outputs are left to the shell', () => {
    const tpl = {
      call_template_type: 'cli',
      commands: [{ command: 'echo $HOME ${TOKEN} ${CMD_0_OUTPUT} $CMD_0_OUTPUT' }],
      env_vars: { T: '$TOKEN' },
    };
    const out = substituteTemplate(tpl, 'm', resolver);
    // The value is not written into the command: it travels beside it, for the environment.
    expect(out.commands[0].command).toBe('echo $HOME UTCP_VAR_TOKEN_UTCP_END ${CMD_0_OUTPUT} $CMD_0_OUTPUT');
    expect(deferredVariables(out)?.get('TOKEN')).toBe('secret-token');
    expect(out.env_vars.T).toBe('secret-token');
  });

  it('in a graphql query only braced references are variables ($id is a GraphQL variable)', () => {
    const tpl = {
      call_template_type: 'graphql',
      url: 'https://$HOST/graphql',
      query: 'query ($id: ID!) { user(id: $id) { name } } # ${TOKEN}',
    };
    const out = substituteTemplate(tpl, 'm', resolver);
    expect(out.query).toBe('query ($id: ID!) { user(id: $id) { name } } # secret-token');
    expect(out.url).toBe('https://api.example.com/graphql');
  });

  it('throws a missing-variable error naming the namespaced key and no value', () => {
    const err = (() => {
      try {
        substituteTemplate({ call_template_type: 'http', url: '${MISSING_VAR}' }, 'http_template', resolver);
      } catch (e) {
        return e as UtcpVariableNotFoundError;
      }
    })()!;
    expect(err).toBeInstanceOf(UtcpVariableNotFoundError);
    expect(err.variableName).toBe('http__template_MISSING_VAR');
    expect(err.message).toContain('http__template_MISSING_VAR');
    expect(err.message).not.toContain('secret');
  });

  it('never falls back to un-namespaced environment variables', () => {
    const r = new VariableResolver({}, [], { HOME: '/root', OPENAI_API_KEY: 'sk-x', m_OK: 'yes' });
    expect(() => substituteTemplate({ call_template_type: 'http', url: '$HOME' }, 'm', r)).toThrow(/m_HOME/);
    expect(() => substituteTemplate({ call_template_type: 'http', url: '$OPENAI_API_KEY' }, 'm', r)).toThrow(
      /m_OPENAI_API_KEY/,
    );
    expect(substituteTemplate({ call_template_type: 'http', url: '$OK' }, 'm', r).url).toBe('yes');
  });

  it('looks up config, then sources in order, then the environment', () => {
    const r = new VariableResolver(
      { m_A: 'config' },
      [{ get: (k) => (k === 'm_B' ? 'source' : k === 'm_A' ? 'shadowed' : undefined) }],
      { m_A: 'env', m_B: 'env', m_C: 'env' },
    );
    expect(r.get('m_A')).toBe('config');
    expect(r.get('m_B')).toBe('source');
    expect(r.get('m_C')).toBe('env');
  });

  it('pre-resolves config values that remap other variables', () => {
    const r = new VariableResolver({ newsapi_NEWS_API_KEY: '${NEWS_API_KEY}' }, [], { NEWS_API_KEY: 'abc' });
    expect(r.get('newsapi_NEWS_API_KEY')).toBe('abc');
  });
});

describe('collectTemplateVariables', () => {
  it('lists namespaced keys once, in first-seen order, honouring the cli rules', () => {
    const keys = collectTemplateVariables(
      {
        call_template_type: 'cli',
        commands: [{ command: 'x ${A} $HOME ${CMD_0_OUTPUT}' }],
        env_vars: { K: '$B', L: '${A}' },
      },
      'my_tools',
    );
    expect(keys).toEqual(['my__tools_A', 'my__tools_B']);
  });
});

describe('dotenv', () => {
  it('parses comments, export, quotes, escapes, multi-line values and expansion', () => {
    const text = [
      '# comment',
      'export A=1',
      'B = two words # trailing',
      "C='literal ${A} \\n'",
      'D="line1\\nline2 \\"q\\" ${A}"',
      'E="multi',
      'line"',
      'F=${A}-${MISSING}',
      '',
    ].join('\n');
    expect(parseDotenv(text, {})).toEqual({
      A: '1',
      B: 'two words',
      C: 'literal ${A} \\n',
      D: 'line1\nline2 "q" 1',
      E: 'multi\nline',
      F: '1-',
    });
  });

  it('re-reads the file when its mtime changes and treats a missing file as empty', () => {
    const dir = mkdtempSync(join(tmpdir(), 'utcp-dotenv-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const src = new DotenvSource('.env', dir);
    expect(src.get('m_KEY')).toBeUndefined();
    writeFileSync(join(dir, '.env'), 'm_KEY=one\n');
    utimesSync(join(dir, '.env'), 1000, 1000);
    expect(src.get('m_KEY')).toBe('one');
    writeFileSync(join(dir, '.env'), 'm_KEY=two\n');
    utimesSync(join(dir, '.env'), 2000, 2000);
    expect(src.get('m_KEY')).toBe('two');
  });
});
