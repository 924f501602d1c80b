/**
 * A coarse command policy in front of `bash`: it refuses a few obviously destructive commands (wiping `/` or
 * the home directory, formatting disks, fork bombs, powering off) whatever the sandbox. It is a guard against
 * accidents, not a security boundary: the sandbox is (docs/design/code-tools.md#command-policy).
 */

export interface PolicyRule {
  pattern: RegExp;
  reason: string;
}

/** Targets whose recursive removal is never wanted: /, /*, ~, $HOME, top-level system directories. */
const ROOTISH = String.raw`(?:/+\*?|/\*|~/?\*?|\$HOME/?\*?|\$\{HOME\}/?\*?|/(?:bin|boot|dev|etc|home|lib|lib64|opt|proc|root|sbin|sys|usr|var)/?\*?)`;

export const DEFAULT_COMMAND_POLICY: readonly PolicyRule[] = Object.freeze([
  {
    pattern: new RegExp(
      String.raw`\brm\s+(?:-[a-zA-Z]*\s+|--[a-z-]+\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-[a-zA-Z-]+\s+)*${ROOTISH}(?=\s|;|&|\||$)`,
    ),
    reason: 'recursive removal of / , the home directory or a system directory',
  },
  { pattern: /\brm\b[^;&|]*--no-preserve-root/, reason: 'rm --no-preserve-root' },
  { pattern: /\bmkfs(?:\.[a-z0-9]+)?\b/, reason: 'formatting a file system (mkfs)' },
  { pattern: /\b(?:wipefs|fdisk|sfdisk|parted)\b/, reason: 'partitioning or wiping a disk' },
  { pattern: /\bdd\b[^;&|]*\bof=\/dev\/(?!null\b|zero\b|stdout\b|stderr\b)/, reason: 'dd onto a device' },
  { pattern: />\s*\/dev\/(?:sd|nvme|vd|hd|xvd|mmcblk)[a-z0-9]*/, reason: 'writing onto a disk device' },
  { pattern: /:\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:\s*&[^}]*\}\s*;?\s*:/, reason: 'a fork bomb' },
  { pattern: /\b(\w+)\s*\(\s*\)\s*\{\s*\1\s*\|\s*\1\s*&\s*\}/, reason: 'a fork bomb' },
  {
    pattern: /(?:^|[;&|]\s*|\bsudo\s+)(?:shutdown|reboot|halt|poweroff)\b/,
    reason: 'powering off or rebooting the machine',
  },
  {
    pattern: /\bchmod\s+(?:-[a-zA-Z]*R[a-zA-Z]*\s+)\S+\s+\/(?=\s|$)/,
    reason: 'changing the permissions of / recursively',
  },
  { pattern: /\bchown\s+(?:-[a-zA-Z]*R[a-zA-Z]*\s+)\S+\s+\/(?=\s|$)/, reason: 'changing the owner of / recursively' },
]);

/** The reason `command` is refused, or undefined when it may run. */
export function policyViolation(
  command: string,
  rules: readonly PolicyRule[] = DEFAULT_COMMAND_POLICY,
): string | undefined {
  for (const rule of rules) if (rule.pattern.test(command)) return rule.reason;
  return undefined;
}
