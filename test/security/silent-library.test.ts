/**
 * Threat model (docs/design/threat-model.md#silent-library): the library prints nothing, whatever a manual holds.
 * Schemas that make Ajv warn (unknown formats and keywords, strict-mode problems, odd templates) go through
 * registration and calls without a byte on stdout/stderr or a console call.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UtcpClient } from './packed.js';

const printed: string[] = [];
beforeEach(() => {
  printed.length = 0;
  for (const m of ['log', 'info', 'warn', 'error', 'debug'] as const)
    vi.spyOn(console, m).mockImplementation((...a: unknown[]) => void printed.push(a.join(' ')));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => (printed.push(String(chunk)), true));
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => (printed.push(String(chunk)), true));
});
afterEach(() => vi.restoreAllMocks());

describe('the library prints nothing', () => {
  it('registers and calls tools whose schemas Ajv would warn about', async () => {
    const inputs = {
      type: 'object',
      properties: {
        a: { type: 'string', format: 'no-such-format', pattern: '^[a-z]+$' },
        b: { type: ['string', 'number'], minimum: 1, 'x-unknown-keyword': true },
        c: { items: { type: 'string' } },
        d: { type: 'integer', exclusiveMinimum: true },
      },
      required: ['a'],
      unknownTopLevel: 1,
    };
    const tools = [
      {
        name: 'f',
        description: '',
        inputs,
        tool_call_template: {
          call_template_type: 'http',
          url: 'http://127.0.0.1:9/x',
          'x-extra': { nested: true },
          timeout: 'soon',
        },
      },
      {
        name: 'g',
        description: '',
        inputs,
        tool_call_template: {
          call_template_type: 'cli',
          commands: [{ command: 'echo UTCP_ARG_a_UTCP_END', extra: 1 }],
        },
      },
    ];
    const c = await UtcpClient.create({}, {});
    await c.registerManual({
      name: 'm',
      call_template_type: 'text',
      content: JSON.stringify({ tools }),
      allowed_communication_protocols: ['http', 'cli'],
    });
    await c.callTool('m.g', { a: 'abc', b: 2 }).catch(() => {});
    await c.callTool('m.g', { a: 1 }).catch(() => {});
    await c.close();
    expect(printed).toEqual([]);
  });
});
