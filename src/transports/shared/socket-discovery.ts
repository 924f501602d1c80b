/**
 * Turns a manual received over a socket (websocket, tcp, udp) into a discovery result:
 * tools without a usable template inherit the raw manual template, and a manual served by a
 * remote host may not point tools at a loopback-like host (docs/design/security.md#remote-loopback).
 */
import { TransportError } from '../../core/errors.js';
import type { CallTemplateBase } from '../../core/types.js';
import type { DiscoveryResult } from '../../core/transport.js';
import { isLoopbackLike } from '../../core/url-policy.js';
import { templateTargets } from './template-targets.js';
import { isPlainObject as isObj } from '../../core/guards.js';

type Obj = Record<string, unknown>;

/** The result of a socket manual whose `discovery_message` is null: no tools, and a warning saying how to add them. */
export function discoveryDisabled(type: 'websocket' | 'tcp' | 'udp'): DiscoveryResult {
  return {
    manual: { tools: [] },
    warnings: [`${type} discovery is disabled (discovery_message is null): register the tools with a static manual`],
  };
}

/** Whether a document is a UTCP manual: an object with a `tools` array. */
export function isManualDocument(value: unknown): value is Obj & { tools: unknown[] } {
  return isObj(value) && Array.isArray(value.tools);
}

export interface SocketDiscoveryOptions {
  /** The raw (unsubstituted) manual template, inherited by tools that have none. */
  rawTemplate: CallTemplateBase;
  /** The host (or URL) the manual came from; decides the remote→loopback rule. */
  sourceHost: string;
  /** For messages, e.g. "TCP discovery from 10.0.0.5:4000". */
  what: string;
}

/**
 * Builds the discovery result from a parsed document. Throws `TransportError` (PROTOCOL_ERROR)
 * when the document is not an object with a `tools` array.
 */
export function socketDiscoveryResult(document: unknown, options: SocketDiscoveryOptions): DiscoveryResult {
  if (!isManualDocument(document)) {
    throw new TransportError(`${options.what} did not return a UTCP manual (an object with a "tools" array)`, {
      code: 'PROTOCOL_ERROR',
    });
  }
  const remoteSource = !isLoopbackLike(options.sourceHost);
  const warnings: string[] = [];
  const tools: unknown[] = [];
  document.tools.forEach((tool, index) => {
    if (!isObj(tool)) {
      tools.push(tool); // the client's validation reports it
      return;
    }
    const own = tool.tool_call_template;
    const hasTemplate = isObj(own) || (own === undefined && isObj(tool.tool_provider));
    const out: Obj = hasTemplate ? tool : { ...tool, tool_call_template: structuredClone(options.rawTemplate) };
    const template = (hasTemplate ? (isObj(own) ? own : tool.tool_provider) : undefined) as Obj | undefined;
    if (remoteSource && templateTargets(template).some((target) => target !== '' && isLoopbackLike(target))) {
      const name = typeof tool.name === 'string' ? tool.name : `#${index}`;
      warnings.push(`Tool ${name} dropped: a manual from a remote host may not target a loopback address`);
      return;
    }
    tools.push(out);
  });
  return { manual: { ...document, tools }, warnings, remoteSource };
}
