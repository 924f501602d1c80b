/** The cli transport end to end through UtcpClient: variables, raw storage, calls, streaming, deadlines. */
import { describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { FIXTURES } from '../fixtures/cli/harness.js';

async function clientWithManual() {
  const client = await UtcpClient.create(
    {
      variables: { clidemo_TOKEN: 's3cret-token', clidemo_MANUAL_FILE: 'token-manual.json' },
      manual_call_templates: [
        {
          name: 'clidemo',
          call_template_type: 'cli',
          env_vars: { MANUAL_FILE: '${MANUAL_FILE}' },
          commands: [{ command: 'cat "$MANUAL_FILE"' }],
        },
      ],
    },
    { rootDir: FIXTURES },
  );
  onTestFinished(() => client.close());
  return client;
}

describe('cli through UtcpClient', () => {
  it('discovers the manual with a ${VAR} in env_vars resolved from config variables', async () => {
    const client = await clientWithManual();
    expect(client.initialRegistrations[0]).toMatchObject({ success: true });
    expect((await client.getTools()).map((t) => t.name).sort()).toEqual([
      'clidemo.json',
      'clidemo.slow',
      'clidemo.whoami',
    ]);
  });

  it('resolves ${TOKEN} into env_vars at call time and leaves $HOME and $CMD_0_OUTPUT to the shell', async () => {
    const client = await clientWithManual();
    const result = await client.callTool('clidemo.whoami', { name: 'Ada; echo pwned' });
    expect(result).toBe(`token=s3cret-token again=s3cret-token home=${process.env.HOME} name=Ada; echo pwned`);
  });

  it('stores raw templates: the secret never appears in tools or registration results', async () => {
    const client = await clientWithManual();
    const tool = await client.getTool('clidemo.whoami');
    expect((tool!.tool_call_template as any).env_vars).toEqual({ API_TOKEN: '${TOKEN}' });
    expect(JSON.stringify(await client.getTools())).not.toContain('s3cret-token');
    expect(JSON.stringify(client.initialRegistrations)).not.toContain('s3cret-token');
  });

  it('returns parsed JSON output', async () => {
    const client = await clientWithManual();
    expect(await client.callTool('clidemo.json', { n: 7 })).toEqual({ n: 7 });
  });

  it('streams exactly one item', async () => {
    const client = await clientWithManual();
    const items: unknown[] = [];
    for await (const item of client.callToolStreaming('clidemo.json', { n: 3 })) items.push(item);
    expect(items).toEqual([{ n: 3 }]);
  });

  it('turns the caller deadline into a timeout error', async () => {
    const client = await clientWithManual();
    await expect(client.callTool('clidemo.slow', {}, { timeoutMs: 300 })).rejects.toMatchObject({ code: 'TIMEOUT' });
  });

  it('reports a missing variable in the manual template as a failed registration', async () => {
    const client = await UtcpClient.create({}, { rootDir: FIXTURES });
    onTestFinished(() => client.close());
    const result = await client.registerManual({
      name: 'broken',
      call_template_type: 'cli',
      env_vars: { X: '${NOPE}' },
      commands: [{ command: 'true' }],
    });
    expect(result.success).toBe(false);
    expect(result.errors.join(' ')).toContain('broken_NOPE');
  });

  it('reports a discovery command failure as a failed registration', async () => {
    const client = await UtcpClient.create({}, { rootDir: FIXTURES });
    onTestFinished(() => client.close());
    const result = await client.registerManual({
      name: 'failing',
      call_template_type: 'cli',
      commands: [{ command: 'echo nope >&2; exit 4' }],
    });
    expect(result.success).toBe(false);
    expect(result.errors.join(' ')).toMatch(/exited with code 4/);
  });
});
