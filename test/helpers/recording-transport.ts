/** An in-test transport that records what it receives; used to observe the client from the transport's side. */
import type { CallOptions, DiscoveryResult, Transport, TransportFactory } from '../../src/index.js';

export interface Recorded {
  discoveries: Array<{ template: any; options: CallOptions }>;
  calls: Array<{ tool: string; args: unknown; template: any; signal: AbortSignal }>;
  instances: number;
  closed: number;
}

export function recordingTransport(
  type: string,
  discover: (template: any) => DiscoveryResult | Promise<DiscoveryResult>,
  call: (args: any, template: any, options: CallOptions) => unknown = (args) => ({ echo: args }),
): { factory: TransportFactory; rec: Recorded } {
  const rec: Recorded = { discoveries: [], calls: [], instances: 0, closed: 0 };
  const factory: TransportFactory = () => {
    rec.instances++;
    const t: Transport = {
      type,
      async registerManual(template, options) {
        rec.discoveries.push({ template, options });
        return discover(template);
      },
      async callTool(tool, args, template, options) {
        rec.calls.push({ tool: tool.name, args, template, signal: options.signal });
        return call(args, template, options);
      },
      async close() {
        rec.closed++;
      },
    };
    return t;
  };
  return { factory, rec };
}
