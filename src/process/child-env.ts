import { UtcpError } from '../core/errors.js';
import { defaultEnvAllowlist } from './env-allowlist.js';

export { DEFAULT_UNIX_ALLOWLIST, DEFAULT_WINDOWS_ALLOWLIST } from './env-allowlist.js';

export interface ChildEnvOptions {
  /** Where inherited values come from (normally `process.env`, which is case-insensitive on Windows). */
  hostEnv: NodeJS.ProcessEnv;
  /** Names to inherit: null/undefined → the default allowlist, `[]` → nothing, a list → exactly these. */
  inherit?: readonly string[] | null;
  /** Variables from the template (`env_vars` of a cli tool, `env` of an MCP stdio server); they win over inherited ones. */
  envVars?: Readonly<Record<string, string>> | null;
  /** Variables the transport itself adds last (argument values, output directory). */
  internal?: Readonly<Record<string, string>>;
  platform: NodeJS.Platform;
  /** Names the template kind in errors, e.g. `cli` or `mcp`. @default 'cli' */
  what?: string;
  /** The template field names used in errors. @default { inherit: 'inherit_env_vars', envVars: 'env_vars' } */
  fields?: { inherit: string; envVars: string };
  /** The code of the errors thrown for bad names or values. @default 'INVALID_MANUAL' */
  errorCode?: 'INVALID_MANUAL' | 'INVALID_CONFIG';
}

/** Bash imports a variable named `BASH_FUNC_<name>%%` as a shell function: it could redefine any command. */
const EXPORTED_FUNCTION = /^BASH_FUNC_/;

/**
 * The environment of every child process the library starts (CLI tools, MCP stdio servers):
 * allowlisted host variables ∪ the template's variables ∪ the transport's own variables.
 * (docs/design/security.md#child-env)
 * Nothing else of the host environment reaches the child. Exported shell functions never do: an inherited
 * `BASH_FUNC_*` name or `() {…}` value is skipped, and a `BASH_FUNC_*` name among `envVars` is refused.
 * Unset names are skipped.
 */
export function buildChildEnv(options: ChildEnvOptions): Record<string, string> {
  const what = options.what ?? 'cli';
  const code = options.errorCode ?? 'INVALID_MANUAL';
  const fields = options.fields ?? { inherit: 'inherit_env_vars', envVars: 'env_vars' };
  const env: Record<string, string> = {};
  const names = options.inherit ?? defaultEnvAllowlist(options.platform);
  if (!Array.isArray(names)) throw new UtcpError(code, `${what}: ${fields.inherit} must be a list of names or null`);
  for (const name of names) {
    if (typeof name !== 'string') throw new UtcpError(code, `${what}: ${fields.inherit} must contain strings`);
    const value = options.hostEnv[name];
    if (typeof value === 'string' && !value.startsWith('()') && !EXPORTED_FUNCTION.test(name)) env[name] = value;
  }
  const envVars = options.envVars;
  if (envVars !== null && envVars !== undefined) {
    if (typeof envVars !== 'object' || Array.isArray(envVars)) {
      throw new UtcpError(code, `${what}: ${fields.envVars} must be an object of strings or null`);
    }
    for (const [name, value] of Object.entries(envVars)) {
      if (name === '' || name.includes('=') || name.includes('\0')) {
        throw new UtcpError(code, `${what}: invalid environment variable name in ${fields.envVars}`);
      }
      if (EXPORTED_FUNCTION.test(name))
        throw new UtcpError(
          code,
          `${what}: ${fields.envVars}.${name} would define a bash function in the child; exported shell functions are refused`,
        );
      if (typeof value !== 'string') throw new UtcpError(code, `${what}: ${fields.envVars}.${name} must be a string`);
      if (value.includes('\0'))
        throw new UtcpError(code, `${what}: ${fields.envVars}.${name} contains a NUL character`);
      env[name] = value;
    }
  }
  for (const [name, value] of Object.entries(options.internal ?? {})) env[name] = value;
  return env;
}
