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

/**
 * Through the client a cli call's own timeout is armed on the client's per-call deadline rather than on a deadline
 * of the transport's (docs/design/transports.md#cli-fast-path): the template's timeout, the caller's signal and close()
 * must still end the call, with the same errors.
 */
describe('cli deadlines through UtcpClient', () => {
  async function sleeper(timeout?: number) {
    const client = await UtcpClient.create({}, { rootDir: FIXTURES });
    onTestFinished(() => client.close());
    const tool = {
      name: 'sleep',
      tool_call_template: {
        call_template_type: 'cli',
        commands: [{ command: 'sleep 30' }],
        ...(timeout === undefined ? {} : { timeout }),
      },
    };
    const r = await client.registerManual({
      name: 'd',
      call_template_type: 'text',
      content: JSON.stringify({ tools: [tool] }),
      allowed_communication_protocols: ['cli'],
    });
    expect(r.success, r.errors.join()).toBe(true);
    return client;
  }

  it('the template timeout ends the call with a TIMEOUT naming the call and the template timeout', async () => {
    const client = await sleeper(400);
    const started = performance.now();
    const error = await client.callTool('d.sleep', {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TIMEOUT', timeoutMs: 400 });
    expect((error as Error).message).toContain('cli call d.sleep');
    expect(performance.now() - started).toBeLessThan(20_000);
  });

  it('the caller’s signal aborts the call, and the call after it runs normally', async () => {
    const client = await sleeper();
    const controller = new AbortController();
    const call = client.callTool('d.sleep', {}, { signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    await expect(call).rejects.toMatchObject({ code: 'ABORTED' });
    await client.registerManual({
      name: 'e',
      call_template_type: 'text',
      content: JSON.stringify({
        tools: [{ name: 'hi', tool_call_template: { call_template_type: 'cli', commands: [{ command: 'echo hi' }] } }],
      }),
      allowed_communication_protocols: ['cli'],
    });
    expect(await client.callTool('e.hi', {})).toBe('hi');
  });

  it('close() of the client ends a running call with CLIENT_CLOSED', async () => {
    const client = await sleeper();
    const call = client.callTool('d.sleep', {});
    await new Promise((r) => setTimeout(r, 200));
    await client.close();
    await expect(call).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
  });
});
