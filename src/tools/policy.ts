/**
 * A coarse command policy in front of `bash`: it refuses a few obviously destructive commands (wiping `/` or
 * the home directory, formatting disks, fork bombs, powering off) whatever the sandbox. It is a guard against
 * accidents, not a security boundary: the sandbox is (docs/design/code-tools.md#command-policy).
 */

import { compileLinearRegex, loadLinearRegex, type LinearRegex } from '../internal.js';

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

/**
 * After `dev/`: anything but the words null, zero, stdout or stderr (each followed by a word boundary), which is
 * `(?!null\b|zero\b|stdout\b|stderr\b)` spelled without lookahead for the linear engine.
 */
const NOT_HARMLESS_DEVICE = String.raw`(?:$|[^nzs]|n(?:$|[^u]|u(?:$|[^l]|l(?:$|[^l]|l\w)))|z(?:$|[^e]|e(?:$|[^r]|r(?:$|[^o]|o\w)))|s(?:$|[^t]|t(?:$|[^d]|d(?:$|[^eo]|o(?:$|[^u]|u(?:$|[^t]|t\w))|e(?:$|[^r]|r(?:$|[^r]|r\w))))))`;

/**
 * The same rules in RE2 syntax, for those of the built-in rules whose backtracking is quadratic in the command
 * (`rm -r -r -r … x`, `dd dd dd …`, `:(){ :(){ …` and `rm … rm …` took seconds at 50 KB): run on the linear-time
 * engine once it is loaded (docs/design/security.md#untrusted-regex).
 */
const LINEAR_TWINS: ReadonlyMap<PolicyRule, string> = new Map([
  [
    DEFAULT_COMMAND_POLICY[0],
    String.raw`\brm\s+(?:-[a-zA-Z]*\s+|--[a-z-]+\s+)*-[a-zA-Z]*[rR][a-zA-Z]*\s+(?:-[a-zA-Z-]+\s+)*${ROOTISH}(?:\s|;|&|\||$)`,
  ],
  [DEFAULT_COMMAND_POLICY[1], String.raw`\brm\b[^;&|]*--no-preserve-root`],
  [DEFAULT_COMMAND_POLICY[4], String.raw`\bdd\b[^;&|]*\bof=/dev/${NOT_HARMLESS_DEVICE}`],
  [DEFAULT_COMMAND_POLICY[6], String.raw`:\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:\s*&[^}]*\}\s*;?\s*:`],
]);

let linearTwins: Map<PolicyRule, LinearRegex> | undefined;

/**
 * Loads the linear-time engine and compiles the built-in rules for it; until then `policyViolation` runs them with
 * `RegExp`. `registerCodeTools` calls it when it registers `bash`.
 */
export async function prepareCommandPolicy(): Promise<void> {
  if (linearTwins) return;
  await loadLinearRegex();
  const twins = new Map<PolicyRule, LinearRegex>();
  for (const [rule, source] of LINEAR_TWINS) {
    const compiled = compileLinearRegex(source, { dialect: 're2' });
    if (!compiled.ok) throw new Error(`command policy rule ${rule.reason}: ${compiled.problem}`);
    twins.set(rule, compiled.regex);
  }
  linearTwins = twins;
}

/** The reason `command` is refused, or undefined when it may run. */
export function policyViolation(
  command: string,
  rules: readonly PolicyRule[] = DEFAULT_COMMAND_POLICY,
): string | undefined {
  for (const rule of rules) {
    const twin = linearTwins?.get(rule);
    if (twin ? twin.test(command) : rule.pattern.test(command)) return rule.reason;
  }
  return undefined;
}
