/**
 * `utcp chat`: a terminal chat with an LLM that can call the tools of the given sources.
 * Tool calls are shown on stderr (`→ name(args)`, `✓ name (12 ms)`, `× name failed: reason`);
 * answers go to stdout. Reads run freely; other calls ask y/n/e on a TTY (or need --yes).
 * Ctrl-C stops at any point (a model request, a tool call, a retry wait, an approval prompt) and exits 130.
 */
import { createInterface, type Interface } from 'node:readline/promises';
import {
  anthropicModel,
  geminiModel,
  openAIChatModel,
  responsesModel,
  runAgent,
  userMessage,
  type AgentEvent,
  type AgentMessage,
  type ApprovalDecision,
  type ApprovalRequest,
  type ChatModel,
} from '../agent/index.js';
import { UsageError, EXIT, clientOptions, type Common } from './commands.js';
import { cyan, dim, formatError, green, red } from './output.js';
import { createCliClient } from './sources.js';

/** The model APIs `utcp chat` speaks (`--provider`, or `UTCP_CHAT_PROVIDER`). */
export const CHAT_PROVIDERS = ['openai', 'responses', 'anthropic', 'gemini'] as const;
type ChatProvider = (typeof CHAT_PROVIDERS)[number];

/** The provider named by the flag or UTCP_CHAT_PROVIDER, else the first whose variables are set. */
function chooseProvider(flag: string | undefined, env: NodeJS.ProcessEnv): ChatProvider {
  const named = flag ?? env.UTCP_CHAT_PROVIDER;
  if (named !== undefined && named !== '') {
    const p = named.toLowerCase();
    if ((CHAT_PROVIDERS as readonly string[]).includes(p)) return p as ChatProvider;
    throw new UsageError(
      `${flag !== undefined ? '--provider' : 'UTCP_CHAT_PROVIDER'} must be one of ${CHAT_PROVIDERS.join(', ')}, got "${named}"`,
    );
  }
  if (env.OPENAI_API_KEY || env.OPENAI_BASE_URL) return 'openai';
  if (env.ANTHROPIC_API_KEY || env.ANTHROPIC_BASE_URL) return 'anthropic';
  if (env.GEMINI_API_KEY || env.GOOGLE_API_KEY || env.GEMINI_BASE_URL) return 'gemini';
  throw new UsageError(
    'utcp chat needs a model endpoint: set OPENAI_BASE_URL (any OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1 for Ollama) and/or OPENAI_API_KEY, or ANTHROPIC_API_KEY, or GEMINI_API_KEY; --provider responses uses the OPENAI_* variables with the Responses API (see utcp chat --help)',
  );
}

/** The chat model from `--provider` / `--model` and the environment (documented in `utcp chat --help`). */
function modelFromEnv(flags: { provider?: string; model?: string; stream: boolean }): ChatModel {
  const env = process.env;
  const provider = chooseProvider(flags.provider, env);
  const stream = flags.stream;
  switch (provider) {
    case 'openai':
    case 'responses': {
      if (!env.OPENAI_API_KEY && !env.OPENAI_BASE_URL)
        throw new UsageError(`--provider ${provider} needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)`);
      const options = {
        baseUrl: env.OPENAI_BASE_URL || undefined,
        apiKey: env.OPENAI_API_KEY || undefined,
        model: flags.model ?? env.OPENAI_MODEL ?? 'gpt-4o-mini',
        stream,
      };
      return provider === 'openai' ? openAIChatModel(options) : responsesModel(options);
    }
    case 'anthropic':
      if (!env.ANTHROPIC_API_KEY && !env.ANTHROPIC_BASE_URL)
        throw new UsageError('--provider anthropic needs ANTHROPIC_API_KEY');
      return anthropicModel({
        apiKey: env.ANTHROPIC_API_KEY || undefined,
        model: flags.model ?? env.ANTHROPIC_MODEL ?? 'claude-sonnet-4-5',
        baseUrl: env.ANTHROPIC_BASE_URL || undefined,
        stream,
      });
    case 'gemini': {
      const apiKey = env.GEMINI_API_KEY || env.GOOGLE_API_KEY || undefined;
      if (!apiKey && !env.GEMINI_BASE_URL)
        throw new UsageError('--provider gemini needs GEMINI_API_KEY (or GOOGLE_API_KEY)');
      return geminiModel({
        apiKey,
        model: flags.model ?? env.GEMINI_MODEL ?? 'gemini-2.5-flash',
        baseUrl: env.GEMINI_BASE_URL || undefined,
        stream,
      });
    }
  }
}

/** Calls that only read: HTTP GET, SSE, GraphQL queries, text/file manuals. Everything else asks. */
function isRead(request: ApprovalRequest): boolean {
  const t = request.tool.tool_call_template as {
    call_template_type: string;
    http_method?: string;
    operation_type?: string;
  };
  switch (t.call_template_type) {
    case 'http':
      return (t.http_method ?? 'GET').toUpperCase() === 'GET';
    case 'sse':
    case 'text':
    case 'file':
      return true;
    case 'graphql':
      return (t.operation_type ?? 'query') === 'query';
    default:
      return false;
  }
}

/** The shell's convention for a command ended by Ctrl-C (128 + SIGINT). */
const INTERRUPTED = 130;

function shortArgs(args: unknown): string {
  const s = JSON.stringify(args);
  return s.length > 120 ? s.slice(0, 119) + '…' : s;
}

export async function chatCommand(
  c: Common,
  opts: { prompt?: string; model?: string; provider?: string; stream?: boolean; yes: boolean; maxSteps?: number },
): Promise<number> {
  const model = modelFromEnv({ provider: opts.provider, model: opts.model, stream: opts.stream === true });
  const interactive = Boolean(process.stdin.isTTY) && opts.prompt === undefined;
  const { client, results } = await createCliClient(clientOptions(c));
  for (const r of results)
    if (!r.success) c.out.info(`${red(c.out, '✗')} ${r.manualCallTemplate?.name}: ${r.errors.join('; ')}`);
  let rl: Interface | undefined;
  const controller = new AbortController();
  // Ctrl-C aborts the run (approvals, model requests, tool calls, retry waits) and ends the input loop.
  // A second Ctrl-C while the first is still winding down exits at once.
  const onSigint = () => {
    if (controller.signal.aborted) process.exit(INTERRUPTED);
    c.out.info(dim(c.out, '\n(interrupted)'));
    controller.abort(new Error('Interrupted'));
    rl?.close();
  };
  process.on('SIGINT', onSigint);
  try {
    const tools = await client.getTools();
    c.out.info(
      dim(c.out, `${tools.length} tool(s) available. ${interactive ? 'Type a question, or Ctrl-D to quit.' : ''}`),
    );
    const askTty = Boolean(process.stdin.isTTY && process.stderr.isTTY);
    if (askTty) {
      rl = createInterface({ input: process.stdin, output: process.stderr });
      // On a terminal readline takes Ctrl-C itself (raw mode) instead of the process getting SIGINT.
      rl.on('SIGINT', onSigint);
    }

    const approve = async (
      request: ApprovalRequest,
      { signal }: { signal: AbortSignal },
    ): Promise<ApprovalDecision> => {
      if (opts.yes || isRead(request)) return { type: 'allow' };
      if (!rl)
        return { type: 'deny', reason: 'The user must approve this call; rerun utcp chat with --yes or in a terminal' };
      for (;;) {
        const answer = (
          await rl.question(
            `${cyan(c.out, '?')} allow ${request.toolName}(${shortArgs(request.args)})? [y]es/[n]o/[e]dit: `,
            { signal },
          )
        )
          .trim()
          .toLowerCase();
        if (answer === 'y' || answer === 'yes') return { type: 'allow' };
        if (answer === 'n' || answer === 'no' || answer === '')
          return { type: 'deny', reason: 'The user declined this call' };
        if (answer === 'e' || answer === 'edit') {
          const text = await rl.question('  new arguments (JSON): ', { signal });
          try {
            const args = JSON.parse(text);
            if (args && typeof args === 'object' && !Array.isArray(args)) return { type: 'edit', args };
          } catch {
            // fall through to the message below
          }
          c.out.info(red(c.out, '  not a JSON object; try again'));
        }
      }
    };

    let streamed = false;
    const onEvent = (e: AgentEvent) => {
      if (e.type === 'text_delta') {
        streamed = true;
        process.stdout.write(e.text);
      } else if (e.type === 'tool_call_start') c.out.info(`${cyan(c.out, '→')} ${e.toolName}(${shortArgs(e.args)})`);
      else if (e.type === 'tool_call_end' && !e.isError)
        c.out.info(`${green(c.out, '✓')} ${e.toolName} ${dim(c.out, `(${Math.round(e.durationMs)} ms)`)}`);
      else if (e.type === 'error' && e.phase === 'tool_call')
        c.out.info(`${red(c.out, '×')} ${e.toolName} failed: ${(e.error as Error)?.message ?? String(e.error)}`);
      else if (e.type === 'approval' && e.decision === 'deny')
        c.out.info(`${red(c.out, '×')} ${e.toolName} denied${e.reason ? `: ${e.reason}` : ''}`);
      else if (e.type === 'tools_loaded')
        c.out.info(dim(c.out, `  search "${e.query}" → ${e.toolNames.length} tool(s)`));
    };

    let messages: AgentMessage[] = [];
    const ask = async (question: string): Promise<void> => {
      const result = await runAgent({
        client,
        model,
        messages: [...messages, userMessage(question)],
        maxSteps: opts.maxSteps,
        approval: { defaultAction: 'ask', approve },
        onEvent,
        signal: controller.signal,
      });
      messages = result.messages;
      // Streamed text is already on stdout; end its line.
      if (streamed) process.stdout.write('\n');
      else c.out.print(result.text);
      streamed = false;
      if (result.stepLimitReached) c.out.info(dim(c.out, '(the step limit was reached)'));
    };

    if (opts.prompt !== undefined) {
      try {
        await ask(opts.prompt);
      } catch (error) {
        if (controller.signal.aborted) return INTERRUPTED;
        throw error;
      }
      return EXIT.OK;
    }
    const input = rl ?? createInterface({ input: process.stdin, terminal: false });
    rl = input;
    const prompt = () => interactive && process.stderr.write(`${cyan(c.out, 'you')} › `);
    prompt();
    // Approvals call rl.question while this loop waits; readline hands that answer to the question, not to the loop.
    for await (const raw of input) {
      const line = raw.trim();
      if (line) {
        try {
          await ask(line);
        } catch (error) {
          if (controller.signal.aborted) break;
          c.out.info(formatError(c.out, error));
        }
      }
      if (controller.signal.aborted) break;
      prompt();
    }
    return controller.signal.aborted ? INTERRUPTED : EXIT.OK;
  } finally {
    process.off('SIGINT', onSigint);
    rl?.close();
    await Promise.all([client.close(), model.close?.()]);
  }
}
