/** The `direct` transport: in-process functions registered on this client, so agents mix local and remote tools. */
import { ToolExecutionError, UtcpError } from '../../core/errors.js';
import { raceSignal } from '../../core/deadline.js';
import type { CallOptions, DiscoveryResult, Transport, TransportContext } from '../../core/transport.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { DirectCallTemplate } from './template.js';
import { errorMessage } from '../../core/guards.js';

export class DirectTransport implements Transport<DirectCallTemplate> {
  readonly type = 'direct';
  readonly #ctx: TransportContext;

  constructor(ctx: TransportContext) {
    this.#ctx = ctx;
  }

  async registerManual(_template: DirectCallTemplate, options: CallOptions): Promise<DiscoveryResult> {
    const tools: Partial<Tool>[] = [];
    for (const [key, entry] of this.#ctx.callables) {
      if (entry.manual !== options.manualName) continue;
      const bare = key.slice(options.manualName.length + 1);
      tools.push({
        name: bare,
        description: entry.description ?? '',
        inputs: (entry.inputs as Tool['inputs']) ?? {},
        outputs: (entry.outputs as Tool['outputs']) ?? {},
        tags: entry.tags ?? [],
        tool_call_template: { call_template_type: 'direct', callable_name: bare } as DirectCallTemplate,
      });
    }
    return { manual: { tools } };
  }

  async callTool(tool: Tool, args: JsonObject, template: DirectCallTemplate, options: CallOptions): Promise<unknown> {
    const bare = template.callable_name ?? tool.name.slice(options.manualName.length + 1);
    const entry = this.#ctx.callables.get(`${options.manualName}.${bare}`) ?? this.#ctx.callables.get(bare);
    if (!entry) throw new UtcpError('TOOL_NOT_FOUND', `No function registered for ${tool.name} (callable "${bare}")`);
    const run = (async () =>
      entry.callable(args, {
        signal: options.signal,
        onProgress: options.onProgress,
        ...(options.callGate ? { callGate: options.callGate } : {}),
      }))();
    try {
      return await raceSignal(run, options.signal, `Tool ${tool.name}`, options.timeoutMs);
    } catch (error) {
      if (error instanceof UtcpError) throw error;
      throw new ToolExecutionError(`Tool ${tool.name} failed: ${errorMessage(error)}`, undefined, { cause: error });
    }
  }

  async close(): Promise<void> {}
}
