import type { Method, Service } from 'protobufjs';
import { UtcpError } from '../../core/errors.js';
import type { JsonSchema } from '../../core/types.js';
import type { GrpcCallTemplate } from './template.js';
import { ProtoSchemaBuilder, typeName } from './proto-schema.js';

export interface ServiceTool {
  name: string;
  description: string;
  inputs: JsonSchema;
  outputs: JsonSchema;
  tags: string[];
  tool_call_template: GrpcCallTemplate;
}

/** The method a generic-mode call targets. @throws UtcpError NOT_SUPPORTED for streaming requests, INVALID_MANUAL when absent. */
export function findMethod(service: Service, name: string): Method {
  const method = Object.prototype.hasOwnProperty.call(service.methods, name) ? service.methods[name] : undefined;
  if (!method) throw new UtcpError('INVALID_MANUAL', `gRPC service ${typeName(service)} has no method ${name}`);
  if (method.requestStream) {
    throw new UtcpError(
      'NOT_SUPPORTED',
      `gRPC method ${typeName(service)}/${name} streams its requests; only unary and server-streaming methods can be called`,
    );
  }
  return method;
}

function outputsOf(method: Method): JsonSchema {
  const schema = new ProtoSchemaBuilder('output').root(method.resolvedResponseType!);
  if (!method.responseStream) return schema;
  const { $defs, ...item } = schema;
  return $defs ? { type: 'array', items: item, $defs } : { type: 'array', items: item };
}

/**
 * One tool per unary or server-streaming method of `service` (only `raw.method_name` when set);
 * client-streaming and bidi methods are skipped with a warning (docs/design/transports.md#grpc).
 */
export function toolsForService(service: Service, raw: GrpcCallTemplate): { tools: ServiceTool[]; warnings: string[] } {
  const serviceName = typeName(service);
  const methods = raw.method_name ? [service.methods[raw.method_name]] : service.methodsArray;
  if (!methods[0] && raw.method_name)
    throw new UtcpError('INVALID_MANUAL', `gRPC service ${serviceName} has no method ${raw.method_name}`);
  const tools: ServiceTool[] = [];
  const warnings: string[] = [];
  for (const method of methods) {
    if (method.requestStream) {
      warnings.push(
        `Skipped gRPC method ${serviceName}/${method.name}: ${method.responseStream ? 'bidirectional' : 'client'} streaming is not supported`,
      );
      continue;
    }
    const comment = method.comment?.trim();
    tools.push({
      name: method.name,
      description: comment ? `${serviceName}/${method.name}\n${comment}` : `${serviceName}/${method.name}`,
      inputs: new ProtoSchemaBuilder('input').root(method.resolvedRequestType!),
      outputs: outputsOf(method),
      tags: [],
      tool_call_template: { ...raw, method_name: method.name },
    });
  }
  return { tools, warnings };
}
