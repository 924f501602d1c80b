import { readFile } from 'node:fs/promises';
import { basename, extname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { sanitizeManualName } from '../../src/internal.js';
import { type CallTemplateBase, type RegisterManualResult, type UtcpClient } from '../../src/index.js';

/** One manual given on the command line, and how it registered. */
export interface LoadedManual {
  name: string;
  source: string;
  result: RegisterManualResult;
}

const NAMED = /^([A-Za-z_][A-Za-z0-9_]*)=(.+)$/s;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nameFromUrl(url: URL): string {
  return sanitizeManualName(url.hostname.replace(/^www\./, '').replace(/^\[|\]$/g, '')) || 'remote';
}

function nameFromFile(path: string): string {
  return sanitizeManualName(basename(path, extname(path))) || 'manual';
}

/**
 * The call templates a command-line argument stands for:
 * `[name=]https://…` (a UTCP manual or OpenAPI spec served over HTTP), or `[name=]path` to a UTCP manual,
 * an OpenAPI spec (JSON or YAML), a call template (has `call_template_type`), or a UTCP config (has `manual_call_templates`).
 */
export async function templatesForArg(arg: string, cwd: string): Promise<CallTemplateBase[]> {
  const named = NAMED.exec(arg);
  const explicitName = named?.[1];
  const target = named ? named[2] : arg;
  if (/^https?:\/\//i.test(target)) {
    const url = new URL(target);
    return [
      {
        name: explicitName ?? nameFromUrl(url),
        call_template_type: 'http',
        url: url.href,
        http_method: 'GET',
      } as CallTemplateBase,
    ];
  }
  const path = resolve(cwd, target);
  const text = await readFile(path, 'utf8');
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch {
    doc = undefined; // the text transport reports what is wrong with it
  }
  if (isRecord(doc) && typeof doc.call_template_type === 'string') {
    return [
      {
        ...doc,
        name: explicitName ?? (typeof doc.name === 'string' ? doc.name : nameFromFile(path)),
      } as CallTemplateBase,
    ];
  }
  if (isRecord(doc) && Array.isArray(doc.manual_call_templates)) {
    return doc.manual_call_templates.filter(isRecord).map(
      (t, i) =>
        ({
          ...t,
          name: typeof t.name === 'string' ? t.name : `${explicitName ?? nameFromFile(path)}_${i + 1}`,
        }) as CallTemplateBase,
    );
  }
  const template: Record<string, unknown> = {
    name: explicitName ?? nameFromFile(path),
    call_template_type: 'text',
    content: text,
  };
  // A UTCP manual file the user named is trusted like a config entry: its tools may use the protocols they
  // declare (by default a `text` manual allows only `text` tools). Remote manuals get no such trust.
  if (isRecord(doc) && Array.isArray(doc.tools)) {
    const protocols = new Set<string>(['text']);
    for (const tool of doc.tools) {
      const type =
        isRecord(tool) && isRecord(tool.tool_call_template) ? tool.tool_call_template.call_template_type : undefined;
      if (typeof type === 'string') protocols.add(type);
    }
    template.allowed_communication_protocols = [...protocols];
  }
  return [template as unknown as CallTemplateBase];
}

/** Registers every manual argument; names already taken get a numeric suffix. */
export async function registerManualArgs(
  client: UtcpClient,
  args: readonly string[],
  cwd: string,
): Promise<LoadedManual[]> {
  const loaded: LoadedManual[] = [];
  const taken = new Set(await client.getManualNames());
  for (const arg of args) {
    for (const template of await templatesForArg(arg, cwd)) {
      const base = sanitizeManualName(template.name ?? 'manual');
      let name = base;
      for (let i = 2; taken.has(name); i++) name = `${base}_${i}`;
      taken.add(name);
      const result = await client.registerManual({ ...template, name });
      loaded.push({ name, source: arg, result });
    }
  }
  return loaded;
}
