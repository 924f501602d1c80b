import { describe, expect, it } from 'vitest';
import { normalizeCallTemplate, normalizeManual } from '../../src/core/legacy.js';
import { TemplateRegistry } from '../../src/core/template-registry.js';
import { builtinTransports } from '../../src/transports/builtin.js';

// The type-specific rewrites come from the built-in transports' template specs (legacy hooks).
const hooks = new TemplateRegistry(builtinTransports);
await Promise.all(hooks.types.map((type) => hooks.load(type)));

describe('legacy v0.1 normalisation', () => {
  it('normalises the v0.1 manual example from the reference', () => {
    const legacy = {
      version: '1.0',
      tools: [
        {
          name: 'everything_get',
          parameters: { type: 'object' },
          tool_provider: {
            provider_type: 'http',
            url: 'https://newsapi.org/v2/everything',
            method: 'get',
            auth: { auth_type: 'api_key', api_key: '$NEWS_API_KEY', var_name: 'X-Api-Key' },
          },
        },
      ],
    };
    const snapshot = structuredClone(legacy);
    const out = normalizeManual(legacy, undefined, [], hooks) as any;
    expect(out.utcp_version).toBe('1.0');
    expect(out.tools[0].inputs).toEqual({ type: 'object' });
    expect(out.tools[0].tool_call_template).toEqual({
      call_template_type: 'http',
      url: 'https://newsapi.org/v2/everything',
      http_method: 'GET',
      auth: { auth_type: 'api_key', api_key: '$NEWS_API_KEY', var_name: 'X-Api-Key' },
    });
    expect(legacy).toEqual(snapshot);
  });

  it.each([
    [{ type: 'http_stream', url: 'u' }, 'streamable_http'],
    [{ provider_type: 'http_sse', url: 'u' }, 'sse'],
    [{ provider_type: 'http_ndjson', url: 'u' }, 'streamable_http'],
    [{ provider_type: 'text', file_path: 'm.json' }, 'file'],
  ])('maps legacy type %j to %s', (input, type) => {
    expect((normalizeCallTemplate(input, [], undefined, hooks) as any).call_template_type).toBe(type);
  });

  it('maps cli command_name/env and drops lossy fields with a note', () => {
    const notes: string[] = [];
    const out = normalizeCallTemplate(
      { provider_type: 'cli', command_name: 'ls -l', env: { A: '1' }, output_format: 'json' },
      notes,
      undefined,
      hooks,
    ) as any;
    expect(out).toEqual({ call_template_type: 'cli', commands: [{ command: 'ls -l' }], env_vars: { A: '1' } });
    expect(notes.join('\n')).toContain('output_format');
  });

  it('maps tcp timeout_ms and legacy auth type/in', () => {
    const out = normalizeCallTemplate({ type: 'tcp', host: 'h', port: 1, timeout_ms: 50 }, [], undefined, hooks) as any;
    expect(out.timeout).toBe(50);
    const auth = (
      normalizeCallTemplate(
        { type: 'http', url: 'u', auth: { type: 'api_key', api_key: 'k', in: 'query' } },
        [],
        undefined,
        hooks,
      ) as any
    ).auth;
    expect(auth).toEqual({ auth_type: 'api_key', api_key: 'k', location: 'query' });
  });

  it('lets tools without a template inherit an endpoint-sharing manual template', () => {
    const manualTemplate = { name: 'ws', call_template_type: 'websocket', url: 'wss://x.io' };
    const out = normalizeManual({ tools: [{ name: 'a' }] }, manualTemplate, [], hooks) as any;
    expect(out.tools[0].tool_call_template).toBe(manualTemplate);
    const http = normalizeManual(
      { tools: [{ name: 'a' }] },
      { name: 'h', call_template_type: 'http', url: 'https://x' },
      [],
      hooks,
    ) as any;
    expect(http.tools[0].tool_call_template).toBeUndefined();
  });
});
