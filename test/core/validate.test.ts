import { describe, expect, it } from 'vitest';
import { plainValidTool, validateCallTemplate, validateTool, validateToolFully } from '../../src/core/validate.js';
import { TemplateRegistry } from '../../src/core/template-registry.js';
import { builtinTransports } from '../../src/transports/builtin.js';

// The built-in transports' template specs, loaded as the client loads them before validating.
const templates = new TemplateRegistry(builtinTransports);
await Promise.all(templates.types.map((type) => templates.load(type)));

describe('validateCallTemplate', () => {
  it('names the path and the problem of a missing required field', () => {
    const issues = validateCallTemplate({ call_template_type: 'http' }, 'tools[3].tool_call_template', { templates });
    expect(issues).toEqual([{ path: 'tools[3].tool_call_template.url', message: 'required' }]);
  });

  it('reports wrong types and bad enum values', () => {
    const issues = validateCallTemplate(
      { call_template_type: 'http', url: 'https://x.io', http_method: 'FETCH', headers: { a: 1 } },
      '',
      { templates },
    );
    expect(issues.map((i) => i.path)).toEqual(['headers.a', 'http_method']);
    expect(issues[1].message).toContain('"GET"');
    expect(issues[0].message).toBe('expected a string, got number');
  });

  it('reports an unknown call_template_type on that field', () => {
    const issues = validateCallTemplate({ call_template_type: 'carrier_pigeon' }, 'x', { templates });
    expect(issues).toEqual([{ path: 'x.call_template_type', message: 'unknown call_template_type "carrier_pigeon"' }]);
  });

  it('validates auth objects by auth_type', () => {
    const issues = validateCallTemplate(
      {
        call_template_type: 'http',
        url: 'https://x.io',
        auth: { auth_type: 'oauth2', client_id: 'a', client_secret: 'b' },
      },
      '',
      { templates },
    );
    expect(issues).toEqual([{ path: 'auth.token_url', message: 'required' }]);
    const unknown = validateCallTemplate(
      { call_template_type: 'http', url: 'https://x.io', auth: { auth_type: 'magic' } },
      '',
      { templates },
    );
    expect(unknown[0].path).toBe('auth.auth_type');
  });

  it('rejects CR/LF in an api_key var_name', () => {
    const issues = validateCallTemplate(
      {
        call_template_type: 'http',
        url: 'https://x.io',
        auth: { auth_type: 'api_key', api_key: 'k', var_name: 'X-Api-Key\r\nX-Injected: yes' },
      },
      '',
      { templates },
    );
    expect(issues[0]).toMatchObject({ path: 'auth.var_name', message: expect.stringContaining('CR/LF') });
  });

  it('requires auth to be null for cli templates and checks every command step', () => {
    const issues = validateCallTemplate(
      {
        call_template_type: 'cli',
        commands: [{ command: 'ls' }, { command: '' }, 'x'],
        auth: { auth_type: 'basic', username: 'u', password: 'p' },
      },
      '',
      { templates },
    );
    expect(issues.map((i) => i.path)).toEqual(['auth', 'commands[1].command', 'commands[2]']);
  });

  it('applies the WebSocket URL policy at validation', () => {
    const issues = validateCallTemplate({ call_template_type: 'websocket', url: 'ws://10.0.0.5/socket' }, '', {
      templates,
    });
    expect(issues[0].message).toContain('WebSocket URL');
    expect(
      validateCallTemplate({ call_template_type: 'websocket', url: 'ws://127.0.0.1:9/s' }, '', { templates }),
    ).toEqual([]);
  });

  it('keeps unknown keys (tolerant reading)', () => {
    expect(
      validateCallTemplate({ call_template_type: 'http', url: 'https://x.io', x_custom: 1 }, '', { templates }),
    ).toEqual([]);
  });
});

describe('validateTool', () => {
  it('fills defaults without mutating the input', () => {
    const input = { name: 'echo', tool_call_template: { call_template_type: 'text', content: 'x' } };
    const { tool, issues } = validateTool(input, 0, { templates });
    expect(issues).toEqual([]);
    expect(tool).toMatchObject({ name: 'echo', description: '', inputs: {}, outputs: {}, tags: [] });
    expect(input).toEqual({ name: 'echo', tool_call_template: { call_template_type: 'text', content: 'x' } });
  });

  it('lists every problem with its path', () => {
    const { tool, issues } = validateTool({ tags: 'x', tool_call_template: { call_template_type: 'http' } }, 3, {
      templates,
    });
    expect(tool).toBeUndefined();
    expect(issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
      'tools[3].name: required',
      'tools[3].tags: expected an array of strings, got string',
      'tools[3].tool_call_template.url: required',
    ]);
  });

  it('takes the fast path only for tools the full checks accept, with the same result', () => {
    // Every field of a usual tool and of its template, set in turn to values of every kind: the fast path must never
    // accept what the full checks refuse, and what it accepts must come out as the full path makes it.
    const base = {
      name: 'get_thing',
      description: 'Gets a thing',
      inputs: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      outputs: { type: 'object' },
      tags: ['things'],
      tool_call_template: { call_template_type: 'http', url: 'https://api.example.com/x', http_method: 'GET' },
    };
    const values: unknown[] = [
      undefined,
      null,
      '',
      '  ',
      'x',
      0,
      1,
      1.5,
      -1,
      true,
      [],
      ['a'],
      [1],
      ['a', 2],
      {},
      { a: 1 },
    ];
    const variants: unknown[] = [base];
    const fields = ['name', 'description', 'inputs', 'outputs', 'tags', 'average_response_size', 'tool_call_template'];
    for (const field of fields) for (const v of values) variants.push({ ...base, [field]: v });
    for (const v of values) variants.push({ ...base, inputs: { ...base.inputs, required: v } });
    const templateFields = [
      'call_template_type',
      'name',
      'allowed_communication_protocols',
      'auth',
      'resilience',
      'url',
      'http_method',
      'headers',
      'timeout',
      'body_encoding',
    ];
    for (const field of templateFields)
      for (const v of [...values, 'POST', 'FETCH', 'base64', { auth_type: 'api_key', api_key: 'k', var_name: 'X' }])
        variants.push({ ...base, tool_call_template: { ...base.tool_call_template, [field]: v } });
    variants.push({ ...base, tool_call_template: { call_template_type: 'text', content: 'x' } });
    variants.push({ ...base, tool_call_template: { call_template_type: 'carrier_pigeon' } });
    variants.push('not a tool', null, [base]);
    let fast = 0;
    for (const [i, variant] of variants.entries()) {
      const plain = plainValidTool(variant, { templates });
      const full = validateToolFully(variant, i, { templates });
      if (plain) {
        fast++;
        expect(full.issues, JSON.stringify(variant)).toEqual([]);
        expect(plain).toEqual(full.tool);
      }
      expect(validateTool(variant, i, { templates })).toEqual(full);
    }
    // The usual variants do take it (the fast path is not simply always declined).
    expect(fast).toBeGreaterThan(60);
    expect(plainValidTool(base, { templates })).toBeDefined();
  });
});
