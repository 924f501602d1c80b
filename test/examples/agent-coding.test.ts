import { spawn } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { lineHash } from '../../src/tools/text.js';
import { lastToolResult, startScriptedOpenAIServer, type ScriptStep } from '../fixtures/llm/scripted-openai-server.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
/** One tsx child per test: its deadline stays below the tests' own timeout (see agent-chat.test.ts). */
const RUN_DEADLINE_MS = 45_000;
const TEST_TIMEOUT_MS = 60_000;
const BUGGY = "function greet(name) {\n  return 'Hello, ' + nme;\n}\n";

function runCodingAgent(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OPENAI|ANTHROPIC)_/.test(k)));
  // bash stays under bubblewrap where it works; the opt-in only lets the example run on a machine without it.
  const optIn = '--dangerously-run-unsandboxed';
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/run.ts', 'coding-agent', optIn, ...args], {
    cwd: repoRoot,
    env: { ...clean, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end();
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`coding-agent did not exit within ${RUN_DEADLINE_MS} ms\nstderr: ${stderr}`));
    }, RUN_DEADLINE_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function setup(steps: ScriptStep[]) {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'coding-agent-')));
  onTestFinished(() => rm(root, { recursive: true, force: true }));
  await writeFile(join(root, 'greet.js'), BUGGY);
  // A remote-style manual next to the local tools (never called here; its tools must be offered).
  const manual = join(root, '..', `${root.split('/').pop()}-notes.json`);
  await writeFile(
    manual,
    JSON.stringify({
      utcp_version: '1.0.1',
      manual_version: '1.0.0',
      tools: [
        {
          name: 'add_note',
          description: 'Adds a note',
          inputs: { type: 'object', properties: { text: { type: 'string' } } },
          tool_call_template: { call_template_type: 'http', url: 'http://127.0.0.1:9/notes', http_method: 'POST' },
        },
      ],
    }),
  );
  onTestFinished(() => rm(manual, { force: true }));
  const server = await startScriptedOpenAIServer(steps);
  onTestFinished(() => server.close());
  return {
    root,
    manual,
    server,
    env: { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'k-test', OPENAI_MODEL: 'scripted' },
  };
}

const readStep: ScriptStep = (request) => {
  const offered = (request.tools ?? []).map((t) => t.function.name).sort();
  const code = [
    'apply_patch',
    'bash',
    'bash_output',
    'edit',
    'glob',
    'grep',
    'list_processes',
    'ls',
    'read',
    'save_plan',
    'save_plan_append',
    'stop_process',
    'update_plan',
    'web_fetch',
    'write',
    'write_append',
  ];
  const expected = [...code.map((t) => `code__${t}`), 'notes__add_note'].sort();
  if (JSON.stringify(offered) !== JSON.stringify(expected)) throw new Error(`offered ${offered.join(', ')}`);
  if (!String(request.messages[0].content).includes('coding agent')) throw new Error('no system prompt');
  return { toolCalls: [{ name: 'code__read', arguments: { path: 'greet.js' } }] };
};

const editStep: ScriptStep = (request) => {
  const read = lastToolResult(request);
  const expected = BUGGY.trimEnd()
    .split('\n')
    .map((line, i) => `   ${i + 1}:${lineHash(line)}\t${line}`)
    .join('\n');
  if (read !== expected) throw new Error(`unexpected read result ${JSON.stringify(read)}`);
  return {
    toolCalls: [
      {
        name: 'code__edit',
        arguments: { path: 'greet.js', old_string: "'Hello, ' + nme", new_string: "'Hello, ' + name" },
      },
    ],
  };
};

describe('coding-agent example', { timeout: TEST_TIMEOUT_MS }, () => {
  it('reads, edits and answers against an OpenAI-format server', async () => {
    const { root, manual, server, env } = await setup([
      readStep,
      editStep,
      (request) => {
        const result = lastToolResult(request);
        if (
          !result.startsWith(
            'Edited greet.js at line 2: replaced 1 line(s) with 1\n\n--- a/greet.js\n+++ b/greet.js\n',
          ) ||
          !result.includes("\n-  return 'Hello, ' + nme;\n+  return 'Hello, ' + name;")
        )
          throw new Error(`unexpected edit result ${result}`);
        return { text: 'Fixed the typo in greet.js: nme → name.' };
      },
    ]);
    const run = await runCodingAgent(['--root', root, '--yes', '--prompt', 'Fix greet.js', `notes=${manual}`], env);
    expect(server.errors).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('Fixed the typo in greet.js: nme → name.\n');
    expect(await readFile(join(root, 'greet.js'), 'utf8')).toBe(
      "function greet(name) {\n  return 'Hello, ' + name;\n}\n",
    );
    const lines = run.stderr.split('\n');
    expect(lines).toContain(`Workspace: ${root}`);
    expect(lines).toContain('→ code.read({"path":"greet.js"})');
    expect(lines).toContain(
      `→ code.edit({"path":"greet.js","old_string":"'Hello, ' + nme","new_string":"'Hello, ' + name"})`,
    );
    expect(lines.filter((l) => /^✓ code\.(read|edit) \(\d+ ms\)$/.test(l))).toHaveLength(2);
    expect(server.pendingSteps()).toBe(0);
  });

  it('denies the edit without a terminal or --yes and leaves the file alone', async () => {
    const { root, manual, server, env } = await setup([
      readStep,
      editStep,
      (request) => {
        if (!lastToolResult(request).includes('rerun with --yes to allow file changes'))
          throw new Error('the model was not told why');
        return { text: 'I need permission to edit files.' };
      },
    ]);
    const run = await runCodingAgent(['--root', root, '--prompt', 'Fix greet.js', `notes=${manual}`], env);
    expect(server.errors).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('I need permission to edit files.\n');
    expect(run.stderr).toContain(
      '× code.edit denied: needs approval, but stdin is not a terminal; rerun with --yes to allow file changes',
    );
    expect(await readFile(join(root, 'greet.js'), 'utf8')).toBe(BUGGY);
  });

  it('runs offline with --demo and fixes the demo bug', async () => {
    const run = await runCodingAgent(['--demo', '--yes'], {});
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      '(scripted demo model) Fixed the typo: Edited greet.js at line 2: replaced 1 line(s) with 1.\n',
    );
    expect(run.stderr).toContain("greet.js is now:\nfunction greet(name) {\n  return 'Hello, ' + name;\n}");
  });
});
