/**
 * A ChatModel that plays back a script, for testing agents without a provider. It fails loudly:
 * a call past the end of the script throws, and `assertDone()` throws when turns were never used.
 */
import type { ChatCallOptions, ChatModel, ChatRequest, ChatResponse } from '../agent/chat-model.js';
import type { ToolCall } from '../agent/messages.js';

/** One scripted turn: a fixed response, or a function of the request (to assert on it or answer from it). */
export type ScriptedTurn =
  | ChatResponse
  | ((request: ChatRequest, options: ChatCallOptions) => ChatResponse | Promise<ChatResponse>);

/** A scripted answer with text only. */
export function textTurn(text: string): ChatResponse {
  return { text, toolCalls: [] };
}

/** A scripted answer with tool calls. `args` may be an object (sent as JSON) or raw text (to send malformed JSON). */
export function toolCallsTurn(
  ...calls: Array<{ name: string; args?: Record<string, unknown> | string; id?: string }>
): ChatResponse {
  return {
    text: '',
    toolCalls: calls.map(
      (c, i): ToolCall => ({
        id: c.id ?? `call_${i + 1}`,
        name: c.name,
        arguments: typeof c.args === 'string' ? c.args : JSON.stringify(c.args ?? {}),
      }),
    ),
  };
}

export class ScriptedModel implements ChatModel {
  readonly provider = 'scripted';
  readonly modelId: string;
  /** Every request received, in order. Tool names in them are the encoded ones the model sees. */
  readonly requests: ChatRequest[] = [];
  readonly #turns: readonly ScriptedTurn[];

  constructor(turns: readonly ScriptedTurn[], options: { modelId?: string } = {}) {
    this.#turns = turns;
    this.modelId = options.modelId ?? 'scripted-model';
  }

  async generate(request: ChatRequest, options: ChatCallOptions): Promise<ChatResponse> {
    options.signal.throwIfAborted();
    const index = this.requests.length;
    this.requests.push(structuredClone(request));
    const turn = this.#turns[index];
    if (turn === undefined)
      throw new Error(`ScriptedModel: unexpected call #${index + 1}; the script has ${this.#turns.length} turns`);
    return typeof turn === 'function' ? turn(request, options) : structuredClone(turn);
  }

  /** Turns not played yet. */
  get remaining(): number {
    return Math.max(0, this.#turns.length - this.requests.length);
  }

  /** Throws when the script has turns that were never played. */
  assertDone(): void {
    if (this.remaining > 0)
      throw new Error(`ScriptedModel: ${this.remaining} of ${this.#turns.length} scripted turns were never used`);
  }
}
