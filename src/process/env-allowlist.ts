/**
 * Host variables a child process (CLI tool, MCP stdio server) inherits by default (docs/design/transports.md#cli,
 * docs/design/security.md#child-env). One list for every transport that starts processes, so they never drift apart.
 */

export const DEFAULT_UNIX_ALLOWLIST: readonly string[] = Object.freeze([
  'PATH',
  'HOME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'USER',
  'LOGNAME',
  'SHELL',
  'TZ',
  'TERM',
]);

export const DEFAULT_WINDOWS_ALLOWLIST: readonly string[] = Object.freeze([
  'PATH',
  'PATHEXT',
  'SYSTEMROOT',
  'SYSTEMDRIVE',
  'WINDIR',
  'COMSPEC',
  'TEMP',
  'TMP',
  'USERPROFILE',
  'USERNAME',
  'USERDOMAIN',
  'COMPUTERNAME',
  'HOMEDRIVE',
  'HOMEPATH',
  'APPDATA',
  'LOCALAPPDATA',
  'PROGRAMDATA',
  'ALLUSERSPROFILE',
  'PUBLIC',
  'PROGRAMFILES',
  'PROGRAMFILES(X86)',
  'PROGRAMW6432',
  'OS',
  'PROCESSOR_ARCHITECTURE',
  'PROCESSOR_IDENTIFIER',
  'PROCESSOR_LEVEL',
  'PROCESSOR_REVISION',
  'NUMBER_OF_PROCESSORS',
  'PSMODULEPATH',
  'LOGONSERVER',
  'SESSIONNAME',
  'USERDNSDOMAIN',
]);

/** The default allowlist for a platform. */
export function defaultEnvAllowlist(platform: NodeJS.Platform): readonly string[] {
  return platform === 'win32' ? DEFAULT_WINDOWS_ALLOWLIST : DEFAULT_UNIX_ALLOWLIST;
}
