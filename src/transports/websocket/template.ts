/** The `websocket` call template (docs/design/transports.md#websocket): its TypeScript type and its validator, in one definition. */
import {
  Type,
  defineCallTemplate,
  nonEmpty,
  oneOf,
  optional,
  stringList,
  stringMap,
  stringOrObject,
} from '../../core/template-schema.js';
import type { TemplateOf } from '../../core/template.js';
import type { JsonObject } from '../../core/types.js';
import { assertUrlAllowed } from '../../core/url-policy.js';

export const template = defineCallTemplate({
  type: 'websocket',
  schema: Type.Object({
    url: nonEmpty(),
    message: optional(Type.Unsafe<string | JsonObject | unknown[]>({ type: ['string', 'object', 'array'] })),
    protocol: optional(Type.String()),
    keep_alive: optional(Type.Boolean()),
    response_format: optional(oneOf(['json', 'text', 'raw'])),
    /** In seconds. @default 30 */
    timeout: optional(Type.Number()),
    headers: optional(stringMap()),
    header_fields: optional(stringList()),
    discovery_message: optional(stringOrObject()),
    tool_routing: optional(oneOf(['single_socket', 'path_per_tool'])),
    response_mode: optional(oneOf(['first_message', 'until_close'])),
  }),
  // The URL policy applies when the template is validated, and again at connect (docs/design/security.md#url-policy).
  check(template, at, issues) {
    if (template.url.includes('$')) return; // a variable: checked after substitution, at connect
    try {
      assertUrlAllowed(template.url, 'template validation', 'ws');
    } catch (e) {
      issues.push({ path: at('url'), message: (e as Error).message });
    }
  },
  inheritsManualTemplate: true,
});

export type WebSocketCallTemplate = TemplateOf<typeof template>;
