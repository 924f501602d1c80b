/**
 * The conversion itself: every operation of an OpenAPI 2.0/3.0/3.1 document becomes one `http`
 * tool or a reported skip (docs/design/openapi.md). Synchronous and free of I/O; the document is never mutated.
 */
import { UrlPolicyError, UtcpError } from '../../core/errors.js';
import { resolveLimits } from '../../core/limits.js';
import type { OpenApiConverterOptions } from '../../core/transport.js';
import type { JsonSchema } from '../../core/types.js';
/** The methods an `http` call template supports. */
type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
import { redactUrl, violatesRemoteLoopback } from '../../core/url-policy.js';
import { BASE_URL_VARIABLE, BaseUrlResolver, joinUrl } from './base-url-resolver.js';
import { namespacedKey } from '../../core/variables.js';
import { ReportBuilder, type OpenApiConversionReport, type OpenApiOperationRef } from './conversion-report.js';
import type { OperationContext } from './operation-context.js';
import { OperationFilter } from './operation-filter.js';
import { outputSchema } from './output-schema.js';
import { collectParameters } from './collect-parameters.js';
import { derefObject, own, RefResolver, setOwn } from './ref-resolver.js';
import { isPlainObject } from '../../core/guards.js';
import { oas3RequestBody, swagger2RequestBody, type RequestBody } from './request-body.js';
import { ExpansionBudget, surveyDocument } from './expansion-budget.js';
import { SchemaExpander } from './schema-expander.js';
import type { SchemaProblems } from './schema-rewrites.js';
import { SecurityMapper, type OperationAuth } from './security-mapper.js';
import { explicitlyPublic, resolveManualAuth } from './manual-auth.js';
import { NameAllocator, nameSource, toolBaseName } from './tool-name.js';

/** The `http` tool call template generated for an operation. */
export interface OpenApiHttpTemplate {
  name: string;
  call_template_type: 'http';
  http_method: HttpMethod;
  url: string;
  content_type: string;
  /**
   * The body input. Absent when the operation has no body (readers default it to "body", which is then not an
   * input); `""` when there is no body but an input is literally named "body" (docs/design/openapi.md#omitted-fields).
   */
  body_field?: string;
  header_fields?: string[];
  cookie_fields?: string[];
  headers?: Record<string, string>;
  auth?: Record<string, unknown>;
  /** *ext.* `style`/`explode` per argument (docs/design/openapi.md#parameter-serialization). */
  parameter_serialization?: Record<
    string,
    { in: string; style: string; explode: boolean } | { in: string; content_type: string }
  >;
  /** *ext.* Multipart properties that are files (docs/design/openapi.md#files). */
  file_fields?: string[];
  /** *ext.* The body argument is the body's bytes, base64-encoded (docs/design/openapi.md#files). */
  body_encoding?: 'base64';
}

export interface OpenApiTool {
  name: string;
  description: string;
  tags: string[];
  inputs: JsonSchema;
  outputs: JsonSchema;
  tool_call_template: OpenApiHttpTemplate;
}

export interface OpenApiManual {
  utcp_version: string;
  manual_version: string;
  tools: OpenApiTool[];
}

export interface OpenApiConversion {
  manual: OpenApiManual;
  report: OpenApiConversionReport;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);
const UNSUPPORTED_METHODS = new Set(['options', 'head', 'trace']);
const NON_OPERATION_KEYS = new Set(['parameters', 'servers', 'summary', 'description', '$ref']);
const PATH_TEMPLATE = /\{([^}]+)\}/g;

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Key-presence detection: unquoted YAML `swagger: 2.0` is a number. */
function detectVersion(doc: Record<string, unknown>): OpenApiConversionReport['specVersion'] {
  if ('swagger' in doc) return '2.0';
  if (!('openapi' in doc)) {
    return 'definitions' in doc || 'securityDefinitions' in doc || 'host' in doc || 'basePath' in doc ? '2.0' : '3.0';
  }
  return String(doc.openapi).startsWith('3.1') ? '3.1' : '3.0';
}

function httpUrl(specUrl: string | undefined): URL | undefined {
  if (!specUrl) return undefined;
  try {
    const u = new URL(specUrl);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Converts a parsed OpenAPI document. Throws `UtcpError` for a non-object document, an invalid
 * filter, and `UrlPolicyError` (message mentions "loopback" or the URL policy) for the remote→loopback
 * rule and malicious token URLs; every other problem is reported. The manual shares unchanged
 * sub-objects with `document` and between tools: treat it as read-only.
 */
export function convertOpenApiSpec(document: unknown, options: OpenApiConverterOptions): OpenApiConversion {
  if (!isPlainObject(document)) throw new UtcpError('INVALID_MANUAL', 'An OpenAPI document must be a JSON/YAML object');
  const doc = document;
  const specVersion = detectVersion(doc);
  const swagger2 = specVersion === '2.0';
  const limits = resolveLimits(options.limits);
  const report = new ReportBuilder();
  const resolver = new RefResolver(doc);
  const specUrl = options.specUrl;
  const httpSpecUrl = httpUrl(specUrl);
  const baseOverride = nonEmpty(options.baseUrl);

  let where = 'document';
  const reportedRefs = new Set<string>();
  const problems: SchemaProblems = {
    externalRef(ref) {
      if (reportedRefs.has(ref)) return;
      reportedRefs.add(ref);
      report.drop(where, `$ref ${ref}`, 'external references are not fetched; replaced by a placeholder schema');
    },
    missingRef(ref) {
      if (reportedRefs.has(ref)) return;
      reportedRefs.add(ref);
      report.drop(where, `$ref ${ref}`, 'the reference does not resolve; replaced by a placeholder schema');
    },
    dropped(construct, reason) {
      report.drop(where, construct, reason);
    },
    changed(construct, reason) {
      report.change(where, construct, reason);
    },
  };
  const survey = surveyDocument(doc);
  const budget = new ExpansionBudget(limits, survey.nodes);
  const inputs = new SchemaExpander(resolver, {
    maxNodes: limits.max_schema_nodes,
    direction: 'input',
    budget,
    problems,
    refUses: survey.refUses,
  });
  const outputs = new SchemaExpander(resolver, {
    maxNodes: limits.max_schema_nodes,
    direction: 'output',
    budget,
    problems,
    refUses: survey.refUses,
  });
  const filter = new OperationFilter(options.filter, (key) =>
    report.drop('template', `openapi_filter.${key}`, 'unknown filter key; ignored'),
  );
  const security = new SecurityMapper({
    doc,
    swagger2,
    resolver,
    specUrl,
    httpSpecUrl,
    authTools: options.authTools,
    drop: (location, construct, reason) => report.drop(location, construct, reason),
  });
  const manualAuth = resolveManualAuth(
    { authTools: options.authTools, auth: options.manualAuth, headers: options.manualHeaders, mode: options.authMode },
    (construct, reason) => report.drop('template', construct, reason),
  );
  const baseUrls = new BaseUrlResolver({ swagger2, doc, httpSpecUrl });
  const names = new NameAllocator();
  const tools: OpenApiTool[] = [];
  const safeBases = new Set<string>();

  const paths = doc.paths;
  if (paths !== undefined && !isPlainObject(paths))
    report.drop('document', 'paths', 'not an object; no operations converted');
  const pathMap = isPlainObject(paths) ? paths : {};

  for (const path of Object.keys(pathMap)) {
    if (path.startsWith('x-')) continue;
    const item = derefObject(pathMap[path], resolver);
    if (!item.value) {
      report.drop(`paths.${path}`, 'path item', `${item.error}; its operations are not converted`);
      continue;
    }
    const pathItem = item.value;
    for (const method of Object.keys(pathItem)) {
      if (!METHODS.has(method) && !UNSUPPORTED_METHODS.has(method)) {
        if (!NON_OPERATION_KEYS.has(method) && !method.startsWith('x-')) {
          report.drop(
            `paths.${path}`,
            `key ${method}`,
            'not an operation (operations are get, put, post, delete, patch)',
          );
        }
        continue;
      }
      report.operations++;
      const ref: OpenApiOperationRef = { method, path };
      const raw = pathItem[method];
      if (!isPlainObject(raw)) {
        report.skip(ref, 'the operation is not an object');
        continue;
      }
      // Operations cannot be `$ref`s in OpenAPI, but some generators emit them.
      const resolved = typeof raw.$ref === 'string' ? derefObject(raw, resolver) : { value: raw };
      const operationId = nonEmpty(own(resolved.value ?? raw, 'operationId'));
      if (operationId !== undefined) ref.operationId = operationId;
      if (!resolved.value) {
        report.skip(ref, `operation ${resolved.error}`);
        continue;
      }
      const op = resolved.value;
      const baseName = toolBaseName(nameSource(operationId, method, path));
      const tags = stringList(op.tags);
      if (filter.active && !filter.matches({ method, path, tags, operationId, toolName: baseName })) {
        report.filtered.push(ref);
        continue;
      }
      if (UNSUPPORTED_METHODS.has(method)) {
        report.skip(ref, `${method.toUpperCase()} operations are not supported by the http call template`);
        continue;
      }
      where = `${method.toUpperCase()} ${path}`;
      const ctx: OperationContext = {
        swagger2,
        resolver,
        doc,
        where,
        drop: (construct, reason) => report.drop(ctx.where, construct, reason),
      };
      let built: OpenApiTool | string;
      try {
        built = convertOperation(op, pathItem, method, path, tags, ctx);
      } catch (e) {
        if (e instanceof UtcpError) throw e;
        built = `conversion failed: ${(e as Error)?.message ?? String(e)}`;
      }
      if (typeof built === 'string') {
        report.skip(ref, built);
      } else {
        built.name = names.allocate(baseName);
        tools.push(built);
        report.tools++;
      }
    }
  }

  /** One operation → a tool, or the reason it is skipped. Throws only for the remote→loopback rule. */
  function convertOperation(
    op: Record<string, unknown>,
    pathItem: Record<string, unknown>,
    method: string,
    path: string,
    tags: string[],
    ctx: OperationContext,
  ): OpenApiTool | string {
    let base: string;
    if (baseOverride !== undefined) {
      base = baseOverride;
    } else {
      const resolved = baseUrls.resolve(pathItem, op);
      if (resolved.reason !== undefined) return resolved.reason;
      if (resolved.relative !== undefined) {
        report.change(
          ctx.where,
          `relative server URL ${JSON.stringify(resolved.relative)}`,
          `bound to the variable \${${BASE_URL_VARIABLE}}: set ${namespacedKey(options.manualName, BASE_URL_VARIABLE)} to the API's origin (e.g. https://api.example.com), or base_url on the template`,
        );
        report.variables.add(namespacedKey(options.manualName, BASE_URL_VARIABLE));
      }
      base = resolved.url;
      // Most operations share a handful of server URLs: each is parsed and checked once per conversion.
      if (!safeBases.has(base) && violatesRemoteLoopback(specUrl, base)) {
        throw new UrlPolicyError(
          `OpenAPI spec from ${redactUrl(specUrl!)} points ${ctx.where} at ${redactUrl(base)}, a loopback address; a remote spec may not target loopback hosts (set base_url to override)`,
        );
      }
      safeBases.add(base);
    }
    return toolFor(op, pathItem, method, path, base, tags, ctx);
  }

  function toolFor(
    op: Record<string, unknown>,
    pathItem: Record<string, unknown>,
    method: string,
    path: string,
    base: string,
    tags: string[],
    ctx: OperationContext,
  ): OpenApiTool {
    const inRoot = inputs.root();
    const collected = collectParameters(pathItem, op, ctx, inRoot);
    let body: RequestBody | undefined;
    if (!swagger2 && op.requestBody !== undefined) {
      body = oas3RequestBody(op, ctx, inRoot);
      if (collected.bodyParam) ctx.drop('body parameter', 'the operation also has a requestBody');
      for (const p of collected.formParams)
        ctx.drop(`formData parameter ${String(p.name)}`, 'the operation also has a requestBody');
    } else {
      body = swagger2RequestBody(collected.bodyParam, collected.formParams, op, ctx, inRoot);
    }

    const properties: Record<string, unknown> = {};
    const required: string[] = [];
    const headerFields: string[] = [];
    const cookieFields: string[] = [];
    let serialization: OpenApiHttpTemplate['parameter_serialization'];
    for (const p of collected.params) {
      if (p.serialization) setOwn((serialization ??= {}), p.name, p.serialization);
      setOwn(properties, p.name, p.schema);
      if (p.required) required.push(p.name);
      if (p.in === 'header') headerFields.push(p.name);
      else if (p.in === 'cookie') cookieFields.push(p.name);
    }
    for (const m of path.matchAll(PATH_TEMPLATE)) {
      const name = m[1];
      if (own(properties, name) !== undefined) continue;
      setOwn(properties, name, { type: 'string' });
      required.push(name);
      ctx.drop(`path parameter ${name}`, 'not declared; added as a required string input');
    }
    let bodyField: string | null = null;
    if (body) {
      bodyField = 'body';
      for (let n = 1; own(properties, bodyField) !== undefined; n++)
        bodyField = n === 1 ? 'request_body' : `request_body_${n}`;
      setOwn(properties, bodyField, bodyInputSchema(body));
      if (body.required) required.push(bodyField);
    }
    const inputSchema = inRoot.finish(
      required.length > 0 ? { type: 'object', properties, required } : { type: 'object', properties },
    );

    const outRoot = outputs.root();
    const out = outputSchema(op, ctx, outRoot);
    const outputSchemaFinished = isPlainObject(out) ? outRoot.finish(out) : {};

    const specAuth = security.forOperation(op, ctx);
    // The manual template's auth fills operations the spec leaves without auth, or replaces the spec's schemes
    // with openapi_auth: "override"; `security: []` (a public endpoint) keeps none (docs/design/openapi.md#manual-auth).
    const override = manualAuth.auth !== undefined && manualAuth.mode === 'override' && !explicitlyPublic(op, doc);
    const auth: OperationAuth = override ? { auth: manualAuth.auth! } : { ...specAuth };
    if (!auth.auth && manualAuth.auth && !explicitlyPublic(op, doc)) auth.auth = { ...manualAuth.auth };
    const headers = manualAuth.headers || auth.headers ? { ...manualAuth.headers, ...auth.headers } : undefined;
    let url = joinUrl(base, path);
    if (auth.query) {
      const pairs = auth.query.map(([k, v]) => `${encodeURIComponent(k)}=${v}`).join('&');
      url += (url.includes('?') ? '&' : '?') + pairs;
    }
    // Empty optionals are omitted, never written as null: other implementations' schemas refuse null
    // (docs/design/openapi.md#omitted-fields).
    const template: OpenApiHttpTemplate = {
      name: options.manualName,
      call_template_type: 'http',
      http_method: method.toUpperCase() as HttpMethod,
      url,
      content_type: body?.contentType ?? 'application/json',
    };
    if (bodyField !== null) template.body_field = bodyField;
    else if (own(properties, 'body') !== undefined) template.body_field = '';
    if (headerFields.length > 0) template.header_fields = headerFields;
    if (cookieFields.length > 0) template.cookie_fields = cookieFields;
    if (headers) template.headers = headers;
    if (serialization) template.parameter_serialization = serialization;
    if (body?.fileFields) template.file_fields = body.fileFields;
    if (body?.binary) template.body_encoding = 'base64';
    if (auth.auth) template.auth = auth.auth;
    return {
      name: '',
      description: operationDescription(nonEmpty(op.summary), nonEmpty(op.description)),
      tags,
      inputs: inputSchema,
      outputs: outputSchemaFinished,
      tool_call_template: template,
    };
  }

  const version = own(doc.info, 'version');
  return {
    manual: {
      utcp_version: '1.0.1',
      manual_version: typeof version === 'number' ? String(version) : (nonEmpty(version) ?? '1.0.0'),
      tools,
    },
    report: report.build(specVersion),
  };
}

/**
 * A tool's description: the summary, then the description when it says more (docs/design/openapi.md#naming): the
 * description is where specs put what a caller must know ("send If-Match"), so it is never dropped for the summary.
 */
function operationDescription(summary: string | undefined, description: string | undefined): string {
  if (!summary) return description ?? '';
  if (!description || description === summary) return summary;
  const head = summary.replace(/[.\s]+$/, '');
  if (description.startsWith(head)) return description;
  return `${summary}\n\n${description}`;
}

/** How a caller passes one file: base64 text, or the bytes with a name and type (docs/design/openapi.md#files). */
const FILE_INPUT = {
  description: 'A file: its bytes base64-encoded, or { data: <base64>, filename, content_type }',
  anyOf: [
    { type: 'string', contentEncoding: 'base64' },
    {
      type: 'object',
      properties: {
        data: { type: 'string', contentEncoding: 'base64', description: 'The file bytes, base64-encoded' },
        filename: { type: 'string', description: 'The file name sent to the server' },
        content_type: { type: 'string', description: 'The media type of the file, e.g. image/png' },
      },
      required: ['data'],
    },
  ],
};

/**
 * The body input's schema: file properties of a multipart body take FILE_INPUT (arrays of it for arrays), a raw
 * binary body takes base64 text. Built on copies: expanded schemas may be shared between tools.
 */
function bodyInputSchema(body: RequestBody): unknown {
  if (body.binary)
    return {
      type: 'string',
      contentEncoding: 'base64',
      contentMediaType: body.contentType,
      description: `The request body (${body.contentType}), base64-encoded`,
    };
  const schema = body.schema as Record<string, unknown>;
  if (!body.fileFields || typeof schema !== 'object' || schema === null || typeof schema.properties !== 'object')
    return body.schema;
  const properties: Record<string, unknown> = { ...(schema.properties as Record<string, unknown>) };
  for (const name of body.fileFields) {
    const old = properties[name] as Record<string, unknown> | undefined;
    if (!old) continue;
    const many = old.type === 'array';
    const file = old.description
      ? { ...FILE_INPUT, description: `${old.description} (${FILE_INPUT.description})` }
      : FILE_INPUT;
    setOwn(
      properties,
      name,
      many ? { type: 'array', items: FILE_INPUT, ...(old.description ? { description: old.description } : {}) } : file,
    );
  }
  return { ...schema, properties };
}
