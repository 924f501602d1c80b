/**
 * Threat model (docs/design/threat-model.md#cli-output-cap): CLI output is capped while it streams. A tool
 * that writes without end (`yes`) is killed, with its whole process tree, as soon as its output crosses
 * `limits.max_response_bytes`, with RESPONSE_TOO_LARGE — long before its timeout, and without writing
 * its output to disk. Through the public API, with a real bash.
 */
import { describe, expect, it } from 'vitest';
import { UtcpClient, UtcpError } from './packed.js';
import { tempDir } from '../fixtures/cli/harness.js';

const CAP = 1024 * 1024;

async function client(commands: Array<{ command: string; append_to_final_output?: boolean }>) {
  const dir = await tempDir();
  const c = await UtcpClient.create({ limits: { max_response_bytes: CAP } }, { rootDir: dir });
  const tools = [
    {
      name: 't',
      description: '',
      inputs: { type: 'object', properties: {} },
      tool_call_template: { call_template_type: 'cli', commands, timeout: 120_000 },
    },
  ];
  const r = await c.registerManual({
    name: 'c',
    call_template_type: 'text',
    content: JSON.stringify({ tools }),
    allowed_communication_protocols: ['cli'],
  });
  expect(r.errors).toEqual([]);
  return c;
}

describe('cli output cap while streaming', () => {
  it.each([
    { name: 'the last step', commands: [{ command: 'yes' }] },
    {
      name: 'a step that is not appended (its output only feeds CMD_0_OUTPUT)',
      commands: [{ command: 'yes', append_to_final_output: false }, { command: 'echo done' }],
    },
    { name: 'stderr', commands: [{ command: 'yes >&2' }] },
    { name: 'a background writer', commands: [{ command: 'yes & wait' }] },
  ])('kills $name at the cap with RESPONSE_TOO_LARGE, not at the timeout', async ({ commands }) => {
    const c = await client(commands);
    const started = Date.now();
    const error = await c.callTool('c.t', {}, { timeoutMs: 120_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UtcpError);
    expect((error as UtcpError).code).toBe('RESPONSE_TOO_LARGE');
    expect((error as Error).message).toContain(String(CAP));
    expect(Date.now() - started).toBeLessThan(60_000); // far from the 120 s timeout
    await c.close();
  });

  it('output below the cap still arrives whole, step by step', async () => {
    const c = await client([
      { command: 'head -c 300000 /dev/zero | tr "\\0" a', append_to_final_output: true },
      { command: 'printf "%s" "${#CMD_0_OUTPUT}"' },
    ]);
    const out = (await c.callTool('c.t', {})) as string;
    expect(out.length).toBe(300000 + 1 + 6);
    expect(out.endsWith('\n300000')).toBe(true);
    await c.close();
  });
});
