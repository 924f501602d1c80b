/** Manuals written in go-utcp's cli dialect (argv-form command/args, call fields inline on tools) register and run. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UtcpClient } from '../../src/index.js';

let client: UtcpClient;
beforeAll(async () => {
  client = await UtcpClient.create({});
});
afterAll(() => client?.close());

describe('go-utcp cli dialect', () => {
  it('reads a provider file whose tools carry command/args inline, with {{name}} arguments', async () => {
    const doc = {
      name: 'tools',
      type: 'cli',
      tools: [
        {
          name: 'say',
          description: 'Print a message',
          command: 'printf',
          args: ['%s|', '{{message}}', "it's literal $HOME"],
        },
        { name: 'pwd_tool', description: 'No arguments', command: 'echo', args: ['ready'] },
      ],
    };
    const r = await client.registerManual({
      name: 'go_file',
      call_template_type: 'text',
      content: JSON.stringify(doc),
      allowed_communication_protocols: ['cli'],
    });
    expect(r.errors).toEqual([]);
    expect(r.manual.tools.map((t) => t.name)).toEqual(['go_file.say', 'go_file.pwd_tool']);
    expect(r.warnings.some((w) => /provider dialect/.test(w))).toBe(true);
    const hostile = 'a b; touch /tmp/never-$$ `id` "$(id)"';
    expect(await client.callTool('go_file.say', { message: hostile })).toBe(`${hostile}|it's literal $HOME|`);
    expect(await client.callTool('go_file.pwd_tool', {})).toBe('ready');
  });

  it('reads a provider object with command/args and ${name} argument references', async () => {
    const doc = {
      version: '0.1.0',
      tools: [
        {
          name: 'shell.run',
          description: 'Run with flags',
          inputs: { type: 'object', properties: { target: { type: 'string' } }, required: ['target'] },
          provider: { type: 'cli', command: 'printf', args: ['[%s]', '--target=${target}'] },
        },
      ],
    };
    const r = await client.registerManual({
      name: 'go_provider',
      call_template_type: 'text',
      content: JSON.stringify(doc),
      allowed_communication_protocols: ['cli'],
    });
    expect(r.errors).toEqual([]);
    expect(r.warnings.some((w) => /go-utcp "command"\/"args" mapped to "commands"/.test(w))).toBe(true);
    expect(await client.callTool('go_provider.shell.run', { target: 'x y $(id)' })).toBe('[--target=x y $(id)]');
  });
});
