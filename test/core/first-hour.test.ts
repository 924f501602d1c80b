/** Library behaviours a new user meets in the first hour: errors that point at the fix, loud dropped tools. */
import { describe, expect, it, onTestFinished } from 'vitest';
import { HttpStatusError, ToolNotFoundError, UtcpClient } from '../../src/index.js';
import { json, startServer } from '../fixtures/http/server.js';

async function client(logs: string[] = []) {
  const c = await UtcpClient.create(
    {},
    {
      logger: {
        warn: (...a: unknown[]) => logs.push(a.filter((x) => typeof x === 'string').join(' ')),
        info: () => {},
      },
    },
  );
  onTestFinished(() => c.close());
  return c;
}

const add = { name: 'get_user', inputs: { type: 'object' }, handler: () => ({ id: 1 }) };

describe('ToolNotFoundError', () => {
  it('suggests the close name for a typo and the full name when the manual prefix is missing', async () => {
    const c = await client();
    await c.registerFunctions('local', [add, { name: 'list_users', handler: () => [] }]);
    const typo: any = await c.callTool('local.get_usr', {}).catch((e: any) => e);
    expect(typo).toBeInstanceOf(ToolNotFoundError);
    expect(typo.suggestions).toEqual(['local.get_user']);
    expect(typo.message).toBe('Tool not found: local.get_usr. Did you mean "local.get_user"?');
    const bare: any = await c.callTool('get_user', {}).catch((e: any) => e);
    expect(bare.suggestions).toEqual(['local.get_user']);
    const far: any = await c.callTool('local.delete_everything', {}).catch((e: any) => e);
    expect(far.suggestions).toEqual([]);
    expect(far.message).toBe('Tool not found: local.delete_everything');
  });
});

describe('manuals that keep fewer tools than they list', () => {
  const cliTool = {
    name: 'hello',
    inputs: { type: 'object' },
    tool_call_template: { call_template_type: 'cli', commands: [{ command: 'echo hi' }] },
  };

  it('warn through the logger with the fix, and a call to a dropped tool says why it is missing', async () => {
    const logs: string[] = [];
    const c = await client(logs);
    const r = await c.registerManual({
      name: 'file1',
      call_template_type: 'text',
      content: JSON.stringify({ tools: [cliTool] }),
    });
    expect(r.success).toBe(true);
    expect(r.manual.tools).toEqual([]);
    expect(r.warnings[0]).toContain('allowed_communication_protocols');
    expect(
      logs.some((l) =>
        /Manual file1 keeps 0 of its 1 tools; allow "cli" in its allowed_communication_protocols/.test(l),
      ),
    ).toBe(true);
    const e: any = await c.callTool('file1.hello', {}).catch((err: any) => err);
    expect(e).toBeInstanceOf(ToolNotFoundError);
    expect(e.message).toMatch(
      /Tool not found: file1\.hello: it was dropped when manual file1 registered: protocol "cli" is not in allowed_communication_protocols \[text\]/,
    );
  });

  it('stay quiet when every tool is kept', async () => {
    const logs: string[] = [];
    const c = await client(logs);
    await c.registerManual({
      name: 'ok',
      call_template_type: 'text',
      content: JSON.stringify({ tools: [cliTool] }),
      allowed_communication_protocols: ['cli'],
    });
    expect(logs).toEqual([]);
  });
});

describe('document errors', () => {
  it('reports invalid JSON as a JSON error with line and column, not a YAML message', async () => {
    const c = await client();
    const r = await c.registerManual({
      name: 'bad',
      call_template_type: 'text',
      content: '{\n  "tools": [\n    { "name": "a" "x": 1 }\n  ]\n}',
    });
    expect(r.success).toBe(false);
    expect(r.errors[0]).toMatch(/is not valid JSON: .* at line 3, column 19/);
    expect(r.errors[0]).not.toMatch(/YAML|Flow map/);
  });

  it('still reads YAML that is not JSON', async () => {
    const c = await client();
    const r = await c.registerManual({
      name: 'y',
      call_template_type: 'text',
      content: 'tools:\n  - name: a\n    tool_call_template: { call_template_type: text, content: "x" }\n',
    });
    expect(r.success).toBe(true);
  });
});

describe('HttpStatusError', () => {
  it("puts the server's explanation in the message and keeps the body excerpt", async () => {
    const server = await startServer((req, res) =>
      json(res, { message: 'Validation Failed: title is too long', errors: [{ field: 'title' }] }, 422),
    );
    onTestFinished(() => server.close());
    const c = await client();
    const manual = {
      tools: [
        {
          name: 'create',
          inputs: { type: 'object' },
          tool_call_template: { call_template_type: 'http', url: `${server.url}/issues`, http_method: 'POST' },
        },
      ],
    };
    const r = await c.registerManual({
      name: 'api',
      call_template_type: 'text',
      content: JSON.stringify(manual),
      allowed_communication_protocols: ['http'],
    });
    expect(r.success).toBe(true);
    const e: any = await c.callTool('api.create', {}).catch((err: any) => err);
    expect(e).toBeInstanceOf(HttpStatusError);
    expect(e.message).toMatch(
      /^HTTP 422 .*from http:\/\/127\.0\.0\.1:\d+\/issues: Validation Failed: title is too long$/,
    );
    expect(e.bodyExcerpt).toContain('"field":"title"');
  });

  it('leaves HTML error pages out of the message', () => {
    const e = new HttpStatusError(502, 'https://x.example/a', '<html><body>Bad gateway</body></html>', 'Bad Gateway');
    expect(e.message).toBe('HTTP 502 Bad Gateway from https://x.example/a');
  });
});

describe("the official SDK's UtcpClient.create(rootDir, config)", () => {
  it('takes an existing directory first and the config second, and relative paths resolve against it', async () => {
    const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = await mkdtemp(join(tmpdir(), 'utcp-create-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const manual = {
      utcp_version: '1.0.1',
      manual_version: '1.0.0',
      tools: [
        {
          name: 'hello',
          description: 'says hello',
          inputs: { type: 'object' },
          tool_call_template: { call_template_type: 'text', content: 'hi' },
        },
      ],
    };
    await writeFile(join(dir, 'tools.json'), JSON.stringify(manual));
    const config = {
      manual_call_templates: [
        {
          name: 'local',
          call_template_type: 'file',
          file_path: 'tools.json',
          allowed_communication_protocols: ['text'],
        },
      ],
    };
    const official = await UtcpClient.create(dir, config);
    onTestFinished(() => official.close());
    expect(official.initialRegistrations.map((r) => r.success)).toEqual([true]);
    expect((await official.getTools()).map((t) => t.name)).toEqual(['local.hello']);
    // create(rootDir) and create(rootDir, null): an empty client rooted there.
    for (const c of [await UtcpClient.create(dir), await UtcpClient.create(dir, null)]) {
      onTestFinished(() => c.close());
      expect(await c.getTools()).toEqual([]);
    }
    // Our own form is unchanged, and a three-argument call whose first argument is not a directory is refused.
    await expect(UtcpClient.create(join(dir, 'missing.json'), {})).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    await expect(
      (UtcpClient.create as (...a: unknown[]) => Promise<unknown>)('not-a-dir', {}, {}),
    ).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
  });
});
