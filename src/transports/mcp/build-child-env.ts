import { defaultEnvAllowlist } from '../shared/env-allowlist.js';

/**
 * The environment of a stdio server: the allowlisted host variables plus the server's `env`
 * (which wins). Nothing else of the host environment reaches the child; exported shell
 * functions (`() {…}` values) are skipped.
 */
export function buildChildEnv(
  serverEnv: Readonly<Record<string, string>>,
  hostEnv: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of defaultEnvAllowlist(platform)) {
    const value = hostEnv[name];
    if (typeof value === 'string' && !value.startsWith('()')) env[name] = value;
  }
  return { ...env, ...serverEnv };
}
