/** Host variables a stdio MCP server inherits on Unix: the CLI default allowlist (security.md §5). */
export const UNIX_ALLOWLIST: readonly string[] = Object.freeze([
  'PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'USER', 'LOGNAME', 'SHELL', 'TZ', 'TERM',
]);

/** Host variables a stdio MCP server inherits on Windows (protocols.md §4). */
export const WINDOWS_ALLOWLIST: readonly string[] = Object.freeze([
  'PATH', 'PATHEXT', 'SYSTEMROOT', 'SYSTEMDRIVE', 'WINDIR', 'COMSPEC', 'TEMP', 'TMP', 'USERPROFILE', 'USERNAME',
  'USERDOMAIN', 'COMPUTERNAME', 'HOMEDRIVE', 'HOMEPATH', 'APPDATA', 'LOCALAPPDATA', 'PROGRAMDATA', 'ALLUSERSPROFILE',
  'PUBLIC', 'PROGRAMFILES', 'PROGRAMFILES(X86)', 'PROGRAMW6432', 'OS', 'PROCESSOR_ARCHITECTURE', 'PROCESSOR_IDENTIFIER',
  'PROCESSOR_LEVEL', 'PROCESSOR_REVISION', 'NUMBER_OF_PROCESSORS', 'PSMODULEPATH', 'LOGONSERVER', 'SESSIONNAME',
  'USERDNSDOMAIN',
]);

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
  for (const name of platform === 'win32' ? WINDOWS_ALLOWLIST : UNIX_ALLOWLIST) {
    const value = hostEnv[name];
    if (typeof value === 'string' && !value.startsWith('()')) env[name] = value;
  }
  return { ...env, ...serverEnv };
}
