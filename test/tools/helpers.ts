import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { onTestFinished } from 'vitest';
import { UtcpClient, type JsonObject } from '../../src/index.js';
import { registerCodeTools, type CodeToolsOptions } from '../../src/tools/index.js';

export async function tempDir(prefix: string): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
}

/** A real workspace on disk with the code tools registered on a fresh client (closed after the test). */
export async function codeWorkspace(files: Record<string, string> = {}, options: Partial<CodeToolsOptions> = {}) {
  const root = await tempDir('code-ws-');
  await writeFiles(root, files);
  const client = await UtcpClient.create({});
  onTestFinished(() => client.close());
  // Tests of the tools themselves opt in to running without a sandbox; sandbox tests pass sandbox: 'bwrap'.
  const tools = await registerCodeTools(client, { root, sandbox: 'none', dangerouslyRunUnsandboxed: true, ...options });
  const call = async (name: string, args: JsonObject): Promise<string> =>
    (await client.callTool(`code.${name}`, args)) as string;
  /** The error message of a failing call. */
  const fail = async (name: string, args: JsonObject): Promise<string> => {
    try {
      await client.callTool(`code.${name}`, args);
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error(`code.${name} did not fail`);
  };
  return { root, client, tools, call, fail };
}
