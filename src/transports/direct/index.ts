/** The `direct` transport: in-process functions registered on this client, so agents mix local and remote tools. */
import { ToolExecutionError, UtcpError } from '../../core/errors.js';
import { raceSignal } from '../../core/deadline.js';
import type { DiscoveryResult, Transport, TransportContext } from '../../core/transport.js';
import type { Tool } from '../../core/types.js';
import type { DirectCallTemplate } from './template.js';

export function createDirectTransport(ctx: TransportContext): Transport<DirectCallTemplate> {
  return {
    type: 'direct',
    async registerManual(_template, options): Promise<DiscoveryResult> {
      const tools: Partial<Tool>[] = [];
      for (const [key, entry] of ctx.callables) {
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
    },
    async callTool(tool, args, template, options) {
      const bare = template.callable_name ?? tool.name.slice(options.manualName.length + 1);
      const entry = ctx.callables.get(`${options.manualName}.${bare}`) ?? ctx.callables.get(bare);
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
        throw new ToolExecutionError(
          `Tool ${tool.name} failed: ${error instanceof Error ? error.message : String(error)}`,
          undefined,
          { cause: error },
        );
      }
    },
    async close() {},
  };
}
