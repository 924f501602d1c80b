import { UtcpError } from '../../core/errors.js';
import { defaultEnvAllowlist } from '../shared/env-allowlist.js';

export { DEFAULT_UNIX_ALLOWLIST, DEFAULT_WINDOWS_ALLOWLIST } from '../shared/env-allowlist.js';

export interface ChildEnvOptions {
  /** Where inherited values come from (normally `process.env`, which is case-insensitive on Windows). */
  hostEnv: NodeJS.ProcessEnv;
  /** `inherit_env_vars`: null/undefined → default allowlist, `[]` → nothing, a list → exactly these. */
  inherit: readonly string[] | null | undefined;
  /** `env_vars`, set after the inherited ones (they win). */
  envVars: Readonly<Record<string, string>> | null | undefined;
  /** Variables the transport itself adds last (argument values, output directory). */
  internal: Readonly<Record<string, string>>;
  platform: NodeJS.Platform;
}

function assertEnvEntry(name: string, value: unknown, field: string): asserts value is string {
  if (name === '' || name.includes('=') || name.includes('\0')) {
    throw new UtcpError('INVALID_MANUAL', `cli: invalid environment variable name in ${field}`);
  }
  if (typeof value !== 'string') throw new UtcpError('INVALID_MANUAL', `cli: ${field}.${name} must be a string`);
  if (value.includes('\0')) throw new UtcpError('INVALID_MANUAL', `cli: ${field}.${name} contains a NUL character`);
}

/**
 * The child's environment: allowlisted host variables ∪ `env_vars` ∪ the transport's own variables
 * (docs/design/security.md#child-env). Nothing else of the host environment reaches the child. Unset names are skipped.
 */
export function buildChildEnv(options: ChildEnvOptions): Record<string, string> {
  const env: Record<string, string> = {};
  const names = options.inherit ?? defaultEnvAllowlist(options.platform);
  if (!Array.isArray(names)) throw new UtcpError('INVALID_MANUAL', 'cli: inherit_env_vars must be a list of names or null');
  for (const name of names) {
    if (typeof name !== 'string') throw new UtcpError('INVALID_MANUAL', 'cli: inherit_env_vars must contain strings');
    const value = options.hostEnv[name];
    if (typeof value === 'string') env[name] = value;
  }
  if (options.envVars !== null && options.envVars !== undefined) {
    if (typeof options.envVars !== 'object' || Array.isArray(options.envVars)) {
      throw new UtcpError('INVALID_MANUAL', 'cli: env_vars must be an object of strings or null');
    }
    for (const [name, value] of Object.entries(options.envVars)) {
      assertEnvEntry(name, value, 'env_vars');
      env[name] = value;
    }
  }
  for (const [name, value] of Object.entries(options.internal)) env[name] = value;
  return env;
}
