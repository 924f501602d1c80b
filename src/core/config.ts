/**
 * The UTCP client config (docs/design/manual-format.md#config): types, loading from an object or a JSON/YAML file,
 * and legacy normalisation (`providers_file_path`, `providers`, `{"type":"dotenv"}`).
 */
import { readFile } from 'node:fs/promises';
import { dirname, extname, isAbsolute, resolve } from 'node:path';
import { parseDocumentText } from './document.js';
import { UtcpError, UtcpValidationError, type ValidationIssue } from './errors.js';
import { normalizeCallTemplate } from './legacy.js';
import { didYouMean } from './suggest.js';
import { validateLimits, type Limits } from './limits.js';
import { validateResilience, type ResilienceConfig } from './resilience.js';
import { validatePostProcessors, type PostProcessorConfig } from './post-processors.js';
import type { CallTemplateBase } from './types.js';
import { isPlainObject as isObj } from './guards.js';

export interface DotenvLoaderConfig {
  variable_loader_type: 'dotenv';
  env_file_path: string;
}

export interface ToolSearchStrategyConfig {
  /** `bm25` (default, ranked full-text) or `tag_and_description_word_match` (the official strategy). */
  tool_search_strategy_type: 'bm25' | 'tag_and_description_word_match' | (string & {});
  description_weight?: number;
  tag_weight?: number;
  /**
   * *ext.* bm25: a folder (relative to the root dir) where the index of each registration of 1,024 tools or more is
   * kept, so a fresh process registering the same tools reads it (docs/design/manual-format.md#index-cache).
   */
  index_cache_dir?: string;
  /**
   * *ext.* bm25: index each registration on the first search after it instead of when it registers, for a process
   * that calls tools by name and may never search (docs/design/manual-format.md#search-index). @default false
   */
  index_on_first_search?: boolean;
  /**
   * *ext.* bm25: how many milliseconds a registration of 1,024 tools or more spends indexing before it returns; the
   * rest is indexed while the process is idle or by the next search (docs/design/manual-format.md#index-in-steps).
   * @default 25
   */
  index_budget_ms?: number;
  [option: string]: unknown;
}

/** The UTCP client configuration. Every key is optional. */
export interface UtcpClientConfig {
  variables?: Record<string, string>;
  load_variables_from?: DotenvLoaderConfig[] | null;
  manual_call_templates?: Array<CallTemplateBase & Record<string, unknown>>;
  tool_repository?: { tool_repository_type: 'in_memory' | (string & {}); [option: string]: unknown };
  tool_search_strategy?: ToolSearchStrategyConfig;
  post_processing?: PostProcessorConfig[];
  limits?: Partial<Limits>;
  /** *ext.* Retries, circuit breaker and concurrency limit of tool calls (docs/design/resilience.md#config). */
  resilience?: ResilienceConfig;
  /** Legacy v0.1: a JSON/YAML file of provider objects, relative to the root dir. */
  providers_file_path?: string;
  /** Legacy (go-utcp style): inline provider objects. */
  providers?: unknown[];
}

export interface LoadedConfig {
  config: UtcpClientConfig & {
    manual_call_templates: Array<CallTemplateBase & Record<string, unknown>>;
    variables: Record<string, string>;
  };
  postProcessing: PostProcessorConfig[];
  warnings: string[];
}

const KNOWN_KEYS = new Set([
  'variables',
  'load_variables_from',
  'manual_call_templates',
  'tool_repository',
  'tool_search_strategy',
  'post_processing',
  'limits',
  'resilience',
  'providers_file_path',
  'providers',
]);

async function readConfigFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'EISDIR') {
      throw new UtcpError(
        'INVALID_CONFIG',
        `Cannot read config file ${path}: it is a directory; to use it as the root directory pass { rootDir } in the client options`,
        { cause },
      );
    }
    throw new UtcpError(
      'INVALID_CONFIG',
      `Cannot read config file ${path}: ${(cause as NodeJS.ErrnoException).code ?? cause}`,
      { cause },
    );
  }
  const ext = extname(path).toLowerCase();
  return parseDocumentText(text, {
    format: ext === '.yaml' || ext === '.yml' ? 'yaml' : ext === '.json' ? 'json' : 'auto',
    what: `config file ${path}`,
  });
}

function providerEntries(doc: unknown): unknown[] {
  if (Array.isArray(doc)) return doc;
  if (isObj(doc) && Array.isArray(doc.providers)) return doc.providers;
  if (isObj(doc)) return [doc];
  return [];
}

/**
 * Warns that a search-index option of the config is ignored: only the in-memory repository's bm25 search builds an
 * index in this process (docs/design/manual-format.md#index-cache).
 */
function warnIfNoLocalIndex(raw: UtcpClientConfig, option: string, warnings: string[]): void {
  const strategy = raw.tool_search_strategy?.tool_search_strategy_type;
  const repository = isObj(raw.tool_repository) ? raw.tool_repository.tool_repository_type : 'in_memory';
  if (strategy !== 'bm25' || repository !== 'in_memory')
    warnings.push(
      `tool_search_strategy.${option} is ignored: it applies to the bm25 search of the in_memory repository (here ${String(strategy)} on ${String(repository)})`,
    );
}

/**
 * Loads and validates a config: an object, or a path to a JSON/YAML file (relative to `rootDir`).
 * Throws `UtcpValidationError` (code INVALID_CONFIG) listing every problem with its path.
 */
export async function loadConfig(input: UtcpClientConfig | string | undefined, rootDir: string): Promise<LoadedConfig> {
  const warnings: string[] = [];
  const raw = typeof input === 'string' ? await readConfigFile(resolve(rootDir, input)) : (input ?? {});
  if (!isObj(raw))
    throw new UtcpValidationError('config', [{ path: '', message: 'expected an object' }], 'INVALID_CONFIG');
  const issues: ValidationIssue[] = [];
  for (const key of Object.keys(raw))
    if (!KNOWN_KEYS.has(key)) warnings.push(`Unknown config key "${key}" ignored${didYouMean(key, KNOWN_KEYS)}`);

  const variables: Record<string, string> = {};
  if (raw.variables !== undefined && raw.variables !== null) {
    if (!isObj(raw.variables)) issues.push({ path: 'variables', message: 'expected an object of strings' });
    else
      for (const [k, v] of Object.entries(raw.variables)) {
        if (typeof v === 'string') variables[k] = v;
        else if (typeof v === 'number' || typeof v === 'boolean') variables[k] = String(v);
        else issues.push({ path: `variables.${k}`, message: 'expected a string' });
      }
  }

  let loaders: DotenvLoaderConfig[] | null = null;
  if (raw.load_variables_from !== undefined && raw.load_variables_from !== null) {
    if (!Array.isArray(raw.load_variables_from))
      issues.push({ path: 'load_variables_from', message: 'expected an array' });
    else {
      loaders = [];
      raw.load_variables_from.forEach((l, i) => {
        const p = `load_variables_from[${i}]`;
        if (!isObj(l)) return void issues.push({ path: p, message: 'expected an object' });
        const type = l.variable_loader_type ?? l.type;
        if (type !== 'dotenv')
          return void issues.push({ path: `${p}.variable_loader_type`, message: 'must be "dotenv"' });
        if (typeof l.env_file_path !== 'string' || !l.env_file_path)
          return void issues.push({ path: `${p}.env_file_path`, message: 'required' });
        loaders!.push({ variable_loader_type: 'dotenv', env_file_path: l.env_file_path });
      });
    }
  }

  const templates: Array<CallTemplateBase & Record<string, unknown>> = [];
  if (raw.manual_call_templates !== undefined && raw.manual_call_templates !== null) {
    if (!Array.isArray(raw.manual_call_templates))
      issues.push({ path: 'manual_call_templates', message: 'expected an array' });
    else
      raw.manual_call_templates.forEach((t, i) =>
        templates.push(normalizeCallTemplate(t, warnings, `manual_call_templates[${i}]`) as never),
      );
  }
  const addProviders = (entries: unknown[], where: string, baseDir?: string) => {
    entries.forEach((entry, i) => {
      let t = normalizeCallTemplate(entry, warnings, `${where}[${i}]`) as Record<string, unknown>;
      // A relative `file_path` (file manuals, and legacy text providers that become file manuals) is relative to the providers file.
      if (baseDir && isObj(t) && typeof t.file_path === 'string' && !isAbsolute(t.file_path)) {
        t = { ...t, file_path: resolve(baseDir, t.file_path) };
      }
      templates.push(t as never);
    });
  };
  if (typeof raw.providers_file_path === 'string') {
    const path = resolve(rootDir, raw.providers_file_path);
    addProviders(providerEntries(await readConfigFile(path)), 'providers_file_path', dirname(path));
    warnings.push('Legacy "providers_file_path" loaded into manual_call_templates');
  }
  if (Array.isArray(raw.providers)) addProviders(raw.providers, 'providers');

  const post = validatePostProcessors(raw.post_processing, 'post_processing');
  issues.push(...post.issues);
  if (
    raw.tool_search_strategy !== undefined &&
    !(isObj(raw.tool_search_strategy) && typeof raw.tool_search_strategy.tool_search_strategy_type === 'string')
  ) {
    issues.push({ path: 'tool_search_strategy.tool_search_strategy_type', message: 'required' });
  } else if (
    raw.tool_search_strategy !== undefined &&
    raw.tool_search_strategy.index_cache_dir !== undefined &&
    (typeof raw.tool_search_strategy.index_cache_dir !== 'string' || raw.tool_search_strategy.index_cache_dir === '')
  ) {
    issues.push({
      path: 'tool_search_strategy.index_cache_dir',
      message: 'expected a folder path (a nonempty string)',
    });
  } else if (raw.tool_search_strategy?.index_cache_dir !== undefined) {
    warnIfNoLocalIndex(raw, 'index_cache_dir', warnings);
  }
  const search = isObj(raw.tool_search_strategy) ? (raw.tool_search_strategy as ToolSearchStrategyConfig) : undefined;
  const deferIndex = search?.index_on_first_search;
  if (deferIndex !== undefined && typeof deferIndex !== 'boolean') {
    issues.push({ path: 'tool_search_strategy.index_on_first_search', message: 'expected true or false' });
  } else if (deferIndex !== undefined) {
    warnIfNoLocalIndex(raw, 'index_on_first_search', warnings);
  }
  const budget = search?.index_budget_ms;
  if (budget !== undefined && !(typeof budget === 'number' && Number.isFinite(budget) && budget >= 0)) {
    issues.push({ path: 'tool_search_strategy.index_budget_ms', message: 'expected a number of milliseconds ≥ 0' });
  } else if (budget !== undefined) {
    warnIfNoLocalIndex(raw, 'index_budget_ms', warnings);
  }
  if (
    raw.tool_repository !== undefined &&
    !(isObj(raw.tool_repository) && typeof raw.tool_repository.tool_repository_type === 'string')
  ) {
    issues.push({ path: 'tool_repository.tool_repository_type', message: 'required' });
  }
  issues.push(...validateLimits(raw.limits));
  issues.push(...validateResilience(raw.resilience, 'resilience'));
  if (issues.length > 0) throw new UtcpValidationError('config', issues, 'INVALID_CONFIG');

  return {
    config: {
      ...(raw as UtcpClientConfig),
      variables,
      load_variables_from: loaders,
      manual_call_templates: templates,
    },
    postProcessing: post.configs,
    warnings,
  };
}
