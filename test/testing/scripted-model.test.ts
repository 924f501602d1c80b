import { describe, expect, it } from 'vitest';
import { ScriptedModel, textTurn, toolCallsTurn } from '../../src/testing/scripted-model.js';
import type { ChatRequest } from '../../src/agent/index.js';

const request: ChatRequest = { messages: [{ type: 'user', text: 'hi' }], tools: [], toolChoice: 'auto' };
const options = () => ({ signal: new AbortController().signal });

describe('ScriptedModel', () => {
  it('plays its turns in order and records the requests', async () => {
    const model = new ScriptedModel([
      toolCallsTurn({ name: 'a__b', args: { x: 1 } }),
      (req) => textTurn(`saw ${req.messages.length}`),
    ]);
    expect(await model.generate(request, options())).toEqual({
      text: '',
      toolCalls: [{ id: 'call_1', name: 'a__b', arguments: '{"x":1}' }],
    });
    expect(await model.generate(request, options())).toEqual({ text: 'saw 1', toolCalls: [] });
    expect(model.requests).toEqual([request, request]);
    expect(() => model.assertDone()).not.toThrow();
  });

  it('throws on a call past the end of the script', async () => {
    const model = new ScriptedModel([textTurn('only')]);
    await model.generate(request, options());
    await expect(model.generate(request, options())).rejects.toThrow('unexpected call #2; the script has 1 turns');
  });

  it('reports unused turns', () => {
    const model = new ScriptedModel([textTurn('a'), textTurn('b')]);
    expect(() => model.assertDone()).toThrow('2 of 2 scripted turns were never used');
  });

  it('keeps raw argument text so malformed JSON can be scripted', () => {
    expect(toolCallsTurn({ name: 't', args: '{"broken', id: 'x' }).toolCalls).toEqual([
      { id: 'x', name: 't', arguments: '{"broken' },
    ]);
  });
});
