/** The `mcp` call template (docs/design/transports.md#mcp): its TypeScript type and its validator, in one definition. */
import { Type, defineCallTemplate, optional } from '../../core/template-schema.js';
import type { TemplateOf } from '../../core/template.js';

/** One server of `config.mcpServers` (checked in detail when the session starts: resolve-server-config.ts). */
export interface McpServerConfig {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  transport?: 'stdio' | 'http' | 'streamable-http' | 'sse';
  headers?: Record<string, string>;
  /** Per request, in seconds. @default 30 */
  timeout?: number;
  [ignored: string]: unknown;
}

const mcpConfig = Type.Object({
  mcpServers: Type.Record(Type.String(), Type.Unsafe<McpServerConfig>({ type: 'object' })),
});

export const template = defineCallTemplate({
  type: 'mcp',
  schema: Type.Object({
    config: mcpConfig,
    register_resources_as_tools: optional(Type.Boolean()),
  }),
  inheritsManualTemplate: true,
});

export type McpCallTemplate = TemplateOf<typeof template>;
