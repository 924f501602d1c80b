/**
 * Replies in each provider's real wire format (JSON or SSE) for scripted turns, and the refusals the real APIs
 * return for malformed requests, so a request the real API would refuse fails the test the same way.
 */
import type { RecordedRequest, ScriptedReply } from './llm-server.js';

export type Provider = 'openai' | 'anthropic' | 'responses' | 'gemini';
export const PROVIDERS: Provider[] = ['openai', 'anthropic', 'responses', 'gemini'];

export interface Turn {
  text?: string;
  calls?: Array<{ id: string; name: string; args: Record<string, unknown> }>;
  /** The model thinks first (Anthropic thinking block with a signature, Responses reasoning item, Gemini thought signature). */
  thinking?: boolean;
}

const usage = { input: 11, output: 7, cached: 3, reasoning: 2 };

function refuse(status: number, provider: Provider, message: string): ScriptedReply {
  if (provider === 'anthropic')
    return { json: { type: 'error', error: { type: 'invalid_request_error', message } }, status };
  if (provider === 'gemini') return { json: { error: { code: status, message, status: 'INVALID_ARGUMENT' } }, status };
  return { json: { error: { message, type: 'invalid_request_error', param: null, code: null } }, status };
}

// ---------------------------------------------------------------- request checks (the real APIs' refusals)

function checkAnthropic(body: any): string | undefined {
  const msgs: any[] = body.messages ?? [];
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i];
    const blocks: any[] = typeof m.content === 'string' ? [{ type: 'text' }] : m.content;
    if (m.role === 'assistant' && body.thinking && blocks.some((b) => b.type === 'tool_use') && i === msgs.length - 2) {
      if (blocks[0].type !== 'thinking' && blocks[0].type !== 'redacted_thinking') {
        return `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${blocks[0].type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`;
      }
      if (blocks[0].type === 'thinking' && blocks[0].signature !== `sig-${blocks[0].thinking}`)
        return `messages.${i}.content.0: Invalid \`signature\` in \`thinking\` block`;
    }
    const uses = blocks.filter((b) => b.type === 'tool_use');
    if (m.role === 'assistant' && uses.length > 0) {
      const next = msgs[i + 1];
      const answered = new Set(
        (next && Array.isArray(next.content) ? next.content : [])
          .filter((b: any) => b.type === 'tool_result')
          .map((b: any) => b.tool_use_id),
      );
      const missing = uses.map((u) => u.id).filter((id) => !answered.has(id));
      if (missing.length > 0)
        return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
    const results = blocks.filter((b) => b.type === 'tool_result');
    if (results.length > 0) {
      const prev = msgs[i - 1];
      const ids = new Set(
        (prev?.role === 'assistant' && Array.isArray(prev.content) ? prev.content : [])
          .filter((b: any) => b.type === 'tool_use')
          .map((b: any) => b.id),
      );
      for (const r of results)
        if (!ids.has(r.tool_use_id))
          return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${r.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
  }
  return undefined;
}

function checkOpenAI(body: any): string | undefined {
  const msgs: any[] = body.messages ?? [];
  for (let i = 0; i < msgs.length; i++) {
    const m = msgs[i];
    if (m.role === 'tool') {
      let j = i - 1;
      while (j >= 0 && msgs[j].role === 'tool') j--;
      const ids = new Set((msgs[j]?.tool_calls ?? []).map((c: any) => c.id));
      if (!ids.has(m.tool_call_id))
        return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`;
      if (
        typeof m.content !== 'string' &&
        !(Array.isArray(m.content) && m.content.every((p: any) => p.type === 'text'))
      )
        return `Invalid 'messages[${i}]'. Image URLs are only allowed for messages with role 'user', but this message with role 'tool' contains an image URL.`;
    }
    if (m.role === 'assistant' && m.tool_calls) {
      const answered = new Set<string>();
      for (let j = i + 1; j < msgs.length && msgs[j].role === 'tool'; j++) answered.add(msgs[j].tool_call_id);
      const missing = m.tool_calls.map((c: any) => c.id).filter((id: string) => !answered.has(id));
      if (missing.length > 0)
        return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`;
    }
  }
  return undefined;
}

function checkResponses(body: any): string | undefined {
  const input: any[] = body.input ?? [];
  const calls = new Map<string, any>();
  const reasoningIds = new Set(input.filter((i) => i.type === 'reasoning').map((i) => i.id));
  for (const item of input) {
    if (item.type === 'function_call') {
      calls.set(item.call_id, item);
      if (item.id?.startsWith('fc_r') && !reasoningIds.has(`rs_${item.call_id}`))
        return `Item '${item.id}' of type 'function_call' was provided without its required 'reasoning' item: 'rs_${item.call_id}'.`;
    }
    if (item.type === 'reasoning' && item.encrypted_content !== `enc-${item.id}`)
      return `The encrypted content for item ${item.id} could not be verified.`;
    if (item.type === 'function_call_output' && !calls.has(item.call_id))
      return `No tool call found for function call output with call_id ${item.call_id}.`;
    // OpenAI's published OpenAPI document marks `detail` required on InputImageContent.
    const parts = [item.content, item.output].flatMap((p) => (Array.isArray(p) ? p : []));
    for (const part of parts)
      if (part?.type === 'input_image' && !['low', 'high', 'auto'].includes(part.detail))
        return "Missing required parameter: 'input[].content[].detail'.";
  }
  const outputs = new Set(input.filter((i) => i.type === 'function_call_output').map((i) => i.call_id));
  for (const id of calls.keys()) if (!outputs.has(id)) return `No tool output found for function call ${id}.`;
  if (body.store !== false) return 'the replica expects store: false';
  return undefined;
}

/** Function calls the Gemini replica issued with a thought signature (`name args`). */
const signedGeminiCalls = new Set<string>();

function checkGemini(body: any): string | undefined {
  const contents: any[] = body.contents ?? [];
  for (let i = 0; i < contents.length; i++) {
    const c = contents[i];
    const calls = c.parts.filter((p: any) => p.functionCall);
    if (c.role === 'model' && calls.length > 0) {
      const key = (p: any) => `${p.functionCall.name} ${JSON.stringify(p.functionCall.args)}`;
      if (signedGeminiCalls.has(key(calls[0])) && !calls[0].thoughtSignature) {
        return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly.`;
      }
      const next = contents[i + 1];
      const responses = (next?.parts ?? []).filter((p: any) => p.functionResponse);
      if (next?.role !== 'user' || responses.length !== calls.length) {
        return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
      }
      for (let k = 0; k < calls.length; k++)
        if (responses[k].functionResponse.name !== calls[k].functionCall.name)
          return 'Function response name does not match the function call name.';
    }
  }
  for (const d of body.tools?.[0]?.functionDeclarations ?? []) {
    if (!/^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/.test(d.name))
      return `* GenerateContentRequest.tools[0].function_declarations: Invalid function name.`;
    if (
      JSON.stringify(d.parameters ?? {}).includes('additionalProperties') ||
      JSON.stringify(d.parameters ?? {}).includes('$schema')
    )
      return 'Invalid JSON payload received. Unknown name "additionalProperties"';
  }
  return undefined;
}

const checks: Record<Provider, (body: any) => string | undefined> = {
  anthropic: checkAnthropic,
  openai: checkOpenAI,
  responses: checkResponses,
  gemini: checkGemini,
};

// ---------------------------------------------------------------- replies

function anthropicBody(turn: Turn): any {
  const content: any[] = [];
  if (turn.thinking)
    content.push(
      { type: 'thinking', thinking: 'Let me look.', signature: 'sig-Let me look.' },
      { type: 'redacted_thinking', data: 'opaque-blob' },
    );
  if (turn.text) content.push({ type: 'text', text: turn.text });
  for (const c of turn.calls ?? []) content.push({ type: 'tool_use', id: c.id, name: c.name, input: c.args });
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'm',
    content,
    stop_reason: turn.calls?.length ? 'tool_use' : 'end_turn',
    usage: {
      input_tokens: usage.input,
      output_tokens: usage.output,
      cache_read_input_tokens: usage.cached,
      cache_creation_input_tokens: 0,
    },
  };
}

function anthropicSse(turn: Turn): unknown[] {
  const b = anthropicBody(turn);
  const events: unknown[] = [
    {
      type: 'message_start',
      message: { ...b, content: [], stop_reason: null, usage: { ...b.usage, output_tokens: 1 } },
    },
  ];
  b.content.forEach((block: any, index: number) => {
    if (block.type === 'thinking') {
      events.push({
        type: 'content_block_start',
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      });
      events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: 'Let me ' } });
      events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: 'look.' } });
      events.push({
        type: 'content_block_delta',
        index,
        delta: { type: 'signature_delta', signature: block.signature },
      });
    } else if (block.type === 'redacted_thinking') {
      events.push({ type: 'content_block_start', index, content_block: block });
    } else if (block.type === 'text') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } });
    } else {
      events.push({
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      const json = JSON.stringify(block.input);
      events.push({
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: json.slice(0, 5) },
      });
      events.push({
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: json.slice(5) },
      });
    }
    events.push({ type: 'content_block_stop', index });
  });
  events.push({ type: 'message_delta', delta: { stop_reason: b.stop_reason }, usage: { output_tokens: usage.output } });
  events.push({ type: 'message_stop' });
  return events;
}

function openAIBody(turn: Turn): any {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: turn.text ?? null,
          ...(turn.calls?.length
            ? {
                tool_calls: turn.calls.map((c) => ({
                  id: c.id,
                  type: 'function',
                  function: { name: c.name, arguments: JSON.stringify(c.args) },
                })),
              }
            : {}),
        },
        finish_reason: turn.calls?.length ? 'tool_calls' : 'stop',
      },
    ],
    usage: {
      prompt_tokens: usage.input,
      completion_tokens: usage.output,
      prompt_tokens_details: { cached_tokens: usage.cached },
      completion_tokens_details: { reasoning_tokens: usage.reasoning },
    },
  };
}

function openAISse(turn: Turn): unknown[] {
  const chunks: unknown[] = [{ id: 'c', choices: [{ index: 0, delta: { role: 'assistant' } }] }];
  if (turn.text) chunks.push({ id: 'c', choices: [{ index: 0, delta: { content: turn.text } }] });
  (turn.calls ?? []).forEach((c, index) => {
    const args = JSON.stringify(c.args);
    chunks.push({
      id: 'c',
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              { index, id: c.id, type: 'function', function: { name: c.name, arguments: args.slice(0, 3) } },
            ],
          },
        },
      ],
    });
    chunks.push({
      id: 'c',
      choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: args.slice(3) } }] } }],
    });
  });
  chunks.push({
    id: 'c',
    choices: [{ index: 0, delta: {}, finish_reason: turn.calls?.length ? 'tool_calls' : 'stop' }],
  });
  chunks.push({ id: 'c', choices: [], usage: openAIBody(turn).usage });
  return chunks;
}

function responsesBody(turn: Turn): any {
  const output: any[] = [];
  for (const c of turn.calls ?? []) {
    if (turn.thinking)
      output.push({ type: 'reasoning', id: `rs_${c.id}`, summary: [], encrypted_content: `enc-rs_${c.id}` });
    output.push({
      type: 'function_call',
      id: turn.thinking ? `fc_r${c.id}` : `fc_${c.id}`,
      call_id: c.id,
      name: c.name,
      arguments: JSON.stringify(c.args),
      status: 'completed',
    });
  }
  if (turn.text)
    output.push({
      type: 'message',
      id: 'msg_1',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: turn.text, annotations: [] }],
    });
  return {
    id: 'resp_1',
    object: 'response',
    status: 'completed',
    output,
    usage: {
      input_tokens: usage.input,
      output_tokens: usage.output,
      input_tokens_details: { cached_tokens: usage.cached },
      output_tokens_details: { reasoning_tokens: usage.reasoning },
      total_tokens: 18,
    },
  };
}

function responsesSse(turn: Turn): unknown[] {
  const body = responsesBody(turn);
  const events: unknown[] = [{ type: 'response.created', response: { ...body, status: 'in_progress', output: [] } }];
  body.output.forEach((item: any, output_index: number) => {
    events.push({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress' } });
    if (item.type === 'message')
      events.push({ type: 'response.output_text.delta', output_index, content_index: 0, delta: item.content[0].text });
    events.push({ type: 'response.output_item.done', output_index, item });
  });
  events.push({ type: 'response.completed', response: body });
  return events;
}

function geminiBody(turn: Turn): any {
  const parts: any[] = [];
  if (turn.text) parts.push({ text: turn.text });
  (turn.calls ?? []).forEach((c, i) => {
    const key = `${c.name} ${JSON.stringify(c.args)}`;
    if (turn.thinking && i === 0) signedGeminiCalls.add(key);
    else signedGeminiCalls.delete(key);
    parts.push({
      functionCall: { name: c.name, args: c.args },
      ...(turn.thinking && i === 0 ? { thoughtSignature: 'c2lnbmF0dXJl' } : {}),
    });
  });
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: {
      promptTokenCount: usage.input,
      candidatesTokenCount: usage.output - usage.reasoning,
      cachedContentTokenCount: usage.cached,
      thoughtsTokenCount: usage.reasoning,
      totalTokenCount: 18,
    },
    modelVersion: 'gemini-test',
    responseId: 'r1',
  };
}

function geminiSse(turn: Turn): unknown[] {
  const body = geminiBody(turn);
  const parts = body.candidates[0].content.parts;
  const text = parts.find((p: any) => p.text);
  const chunks: unknown[] = [];
  if (text) {
    chunks.push({ candidates: [{ content: { role: 'model', parts: [{ text: text.text.slice(0, 2) }] }, index: 0 }] });
    chunks.push({ candidates: [{ content: { role: 'model', parts: [{ text: text.text.slice(2) }] }, index: 0 }] });
  }
  const calls = parts.filter((p: any) => p.functionCall);
  if (calls.length) chunks.push({ candidates: [{ content: { role: 'model', parts: calls }, index: 0 }] });
  chunks.push({
    candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: body.usageMetadata,
  });
  return chunks;
}

/** The scripted reply for one turn: checks the request like the real API, then answers in its format. */
export function replyFor(provider: Provider, turn: Turn, stream: boolean): ScriptedReply {
  return {
    check: (req: RecordedRequest) => {
      const problem = checks[provider](req.body);
      if (problem) return refuse(400, provider, problem);
      switch (provider) {
        case 'anthropic':
          return stream ? { sse: anthropicSse(turn), eventNames: true } : { json: anthropicBody(turn) };
        case 'openai':
          return stream ? { sse: openAISse(turn), done: true } : { json: openAIBody(turn) };
        case 'responses':
          return stream ? { sse: responsesSse(turn), eventNames: true } : { json: responsesBody(turn) };
        case 'gemini':
          return stream ? { sse: geminiSse(turn) } : { json: geminiBody(turn) };
      }
    },
  };
}

/** The usage the replicas report for every turn, as `TokenUsage`. */
export const REPLICA_TURN_USAGE: Record<Provider, Record<string, number>> = {
  openai: { inputTokens: 11, outputTokens: 7, cachedInputTokens: 3, reasoningTokens: 2 },
  responses: { inputTokens: 11, outputTokens: 7, cachedInputTokens: 3, reasoningTokens: 2 },
  anthropic: { inputTokens: 14, outputTokens: 7, cachedInputTokens: 3 },
  gemini: { inputTokens: 11, outputTokens: 7, cachedInputTokens: 3, reasoningTokens: 2 },
};
