/** `--demo`: an offline run on a throw-away workspace, with a scripted stand-in for the model. */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatRequest, ChatResponse } from '../../src/agent/index.js';
import { ScriptedModel } from '../../src/testing/index.js';

export const DEMO_PROMPT = 'greet.js prints "Hello, undefined". Fix it.';
export const DEMO_FILE = 'greet.js';

/** Creates a workspace holding one small bug. */
export async function createDemoWorkspace(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'coding-agent-demo-'));
  await writeFile(
    join(root, DEMO_FILE),
    "function greet(name) {\n  return 'Hello, ' + nme;\n}\n\nconsole.log(greet('world'));\n",
  );
  return root;
}

function toolName(request: ChatRequest, suffix: string): string {
  const tool = request.tools.find((t) => t.name.endsWith(`_${suffix}`) || t.name.endsWith(`.${suffix}`));
  if (!tool) throw new Error(`the demo needs a tool named *${suffix}`);
  return tool.name;
}

function lastResult(request: ChatRequest): string {
  const m = [...request.messages].reverse().find((x) => x.type === 'tool_result');
  return m?.type === 'tool_result' ? m.content : '';
}

/** Reads the file, fixes the typo with an edit, then reports what happened. */
export function demoModel(): ScriptedModel {
  return new ScriptedModel(
    [
      (request): ChatResponse => ({
        text: 'Let me look at the file.',
        toolCalls: [
          { id: 'call_read', name: toolName(request, 'read'), arguments: JSON.stringify({ path: DEMO_FILE }) },
        ],
      }),
      (request): ChatResponse => ({
        text: 'The function uses `nme` instead of `name`.',
        toolCalls: [
          {
            id: 'call_edit',
            name: toolName(request, 'edit'),
            arguments: JSON.stringify({
              path: DEMO_FILE,
              old_string: "'Hello, ' + nme",
              new_string: "'Hello, ' + name",
            }),
          },
        ],
      }),
      (request): ChatResponse => {
        // The first line says what changed; the unified diff follows.
        const result = lastResult(request).split('\n')[0];
        return {
          text: result.startsWith('Edited')
            ? `(scripted demo model) Fixed the typo: ${result}.`
            : `(scripted demo model) The edit did not happen: ${result}`,
          toolCalls: [],
        };
      },
    ],
    { modelId: 'scripted-demo' },
  );
}
