/** Shared setup for the graphql transport tests: a real server, a transport, and call options. */
import { onTestFinished } from 'vitest';
import type { CallOptions } from '../../src/core/transport.js';
import type { Tool } from '../../src/core/types.js';
import type { GraphqlCallTemplate } from '../../src/index.js';
import { createGraphqlTransport } from '../../src/transports/graphql/index.js';
import { startGraphqlServer, type GraphqlTestServer } from '../fixtures/graphql/graphql-server.js';
import { createTestContext } from '../helpers/context.js';

export const MANUAL = 'gql';

export async function graphqlServer(): Promise<GraphqlTestServer> {
  const server = await startGraphqlServer();
  onTestFinished(() => server.close());
  return server;
}

export function graphqlTransport(overrides: Parameters<typeof createTestContext>[0] = {}) {
  const ctx = createTestContext(overrides);
  const transport = createGraphqlTransport(ctx);
  onTestFinished(async () => {
    await transport.close();
    await ctx.disposeShared();
  });
  return { ctx, transport };
}

export function callOptions(raw: GraphqlCallTemplate, signal: AbortSignal = new AbortController().signal): CallOptions {
  return { signal, manualName: MANUAL, rawTemplate: raw };
}

export function template(url: string, extra: Partial<GraphqlCallTemplate> = {}): GraphqlCallTemplate {
  return { name: MANUAL, call_template_type: 'graphql', url, ...extra };
}

/** Registers `raw` and returns the generated tools by bare name, stored as the client would (`gql.<name>`). */
export async function discover(
  transport: ReturnType<typeof graphqlTransport>['transport'],
  raw: GraphqlCallTemplate,
  substituted: GraphqlCallTemplate = raw,
) {
  const result = await transport.registerManual(substituted, callOptions(raw));
  const tools = (result.manual as { tools: Tool[] }).tools;
  const byName = new Map(tools.map((t) => [t.name, { ...t, name: `${MANUAL}.${t.name}` } as Tool]));
  return {
    result,
    tools,
    tool: (name: string) => {
      const t = byName.get(name);
      if (!t) throw new Error(`no tool ${name}`);
      return t;
    },
  };
}
