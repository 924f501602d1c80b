/**
 * Issue #24 item 8 (docs/design/threat-model.md#untrusted-regex): a regular expression from the model (grep's
 * pattern, bash_output's wait_for) or from a manual's schema (`pattern`, `patternProperties`) must not pin the event
 * loop. Each attack runs in a child process on the built package (dist/), so a pinned loop is killed at the child's
 * deadline and fails the test instead of hanging the worker; the child reports how long its loop was blocked.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const FIXTURE = new URL('../fixtures/regex/attack.mjs', import.meta.url).pathname;
/** The child's deadline: well above the ~1 s an attack takes (spawn and import included), below the test's own. */
const CHILD_DEADLINE_MS = 30_000;
const TEST_TIMEOUT_MS = 60_000;
/** Longest the child's event loop may be blocked at once; the backtracking engine blocks it for minutes. */
const MAX_LAG_MS = 2_000;
const hasRipgrep = ['/usr/bin/rg', '/usr/local/bin/rg', '/bin/rg'].some((p) => existsSync(p));

interface Report {
  outcome: 'returned' | 'threw';
  result?: unknown;
  error?: { name: string; code: string; issues?: Array<{ path: string; message: string }>; message: string };
  elapsedMs: number;
  maxLagMs: number;
  requests?: number;
  warnings?: number;
}

let workspace: string;
let noRipgrepPath: string;

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'utcp-regex-'));
  noRipgrepPath = await mkdtemp(join(tmpdir(), 'utcp-regex-path-'));
  // 200 lines on which `(a+)+$` backtracks 2^40 times each in JavaScript's RegExp.
  await writeFile(join(workspace, 'evil.txt'), `${'a'.repeat(40)}!\n`.repeat(200));
  // A long file name for `*a*a*a*a*a*a*a*b`, which picomatch's RegExp matches in time polynomial in the name.
  await writeFile(join(workspace, `${'a'.repeat(120)}.txt`), 'x\n');
});
afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
  await rm(noRipgrepPath, { recursive: true, force: true });
});

/** Runs one scenario of the fixture; rejects when the child had to be killed at its deadline. */
function attack(scenario: string, env: NodeJS.ProcessEnv = process.env): Promise<Report> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [FIXTURE, scenario, workspace],
      { env, timeout: CHILD_DEADLINE_MS, killSignal: 'SIGKILL', maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error)
          return reject(
            new Error(
              `${scenario}: the child ${error.killed ? `was still pinned after ${CHILD_DEADLINE_MS} ms` : 'failed'}: ${stderr.slice(-2000)}`,
            ),
          );
        resolve(JSON.parse(stdout.trim().split('\n').pop()!) as Report);
      },
    );
  });
}

function expectResponsive(report: Report): void {
  expect(report.maxLagMs).toBeLessThan(MAX_LAG_MS);
}

describe('grep: the model pattern (`(a+)+$` against 200 lines of 40 a and !)', () => {
  it(
    'the built-in search (ripgrep: false) answers "no matches" without pinning the loop',
    async () => {
      const report = await attack('grep-builtin');
      expect(report.outcome).toBe('returned');
      expect(report.result).toMatch(/^No matches/);
      expectResponsive(report);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'with no ripgrep on PATH the default tool set falls back to the built-in search, which stays linear',
    async () => {
      const report = await attack('grep-default', { ...process.env, PATH: noRipgrepPath });
      expect(report.outcome).toBe('returned');
      expect(report.result).toMatch(/^No matches/);
      expectResponsive(report);
    },
    TEST_TIMEOUT_MS,
  );

  it.skipIf(!hasRipgrep)(
    'with ripgrep on PATH (a linear engine of its own) the same pattern answers promptly',
    async () => {
      const report = await attack('grep-default');
      expect(report.outcome).toBe('returned');
      expect(report.result).toMatch(/^No matches/);
      expectResponsive(report);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a backreference or lookahead is a typed argument error naming the pattern and its problem',
    async () => {
      const report = await attack('grep-unsupported');
      expect(report.outcome).toBe('threw');
      expect(report.error).toMatchObject({ name: 'UtcpArgumentsError', code: 'INVALID_ARGUMENTS' });
      expect(report.error?.issues?.[0]).toMatchObject({ path: 'pattern' });
      expect(report.error?.issues?.[0].message).toMatch(/\\\\1.*invalid escape sequence.*backreferences/);
      expectResponsive(report);
    },
    TEST_TIMEOUT_MS,
  );
});

describe("the model's glob (glob tool, grep's glob filter)", () => {
  it(
    '`*a*a*a*a*a*a*a*b` against a 124-character file name answers promptly; a negated extglob is a typed error',
    async () => {
      const report = await attack('glob');
      expect(report.outcome).toBe('returned');
      const result = report.result as Record<string, unknown>;
      expect(result.glob).toMatch(/^No files match/);
      expect(result.grep).toMatch(/^No matches/);
      expect(result.negated).toMatchObject({ name: 'UtcpArgumentsError', code: 'INVALID_ARGUMENTS' });
      expect(result.negated).toMatchObject({
        issues: [{ path: 'pattern', message: expect.stringMatching(/extglob/) }],
      });
      expectResponsive(report);
    },
    TEST_TIMEOUT_MS,
  );
});

describe("bash_output's wait_for", () => {
  it(
    '`^(a+)+$` over output of 40 a and ! waits out wait_ms with the loop responsive',
    async () => {
      const report = await attack('wait-for');
      expect(report.outcome).toBe('returned');
      expect(report.result).toMatch(/wait_for did not match within 1500 ms/);
      expect(report.elapsedMs).toBeLessThan(15_000);
      expectResponsive(report);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an unsupported pattern (lookbehind, backreference) is a typed argument error on wait_for',
    async () => {
      const report = await attack('wait-for-unsupported');
      expect(report.outcome).toBe('threw');
      expect(report.error).toMatchObject({ name: 'UtcpArgumentsError', code: 'INVALID_ARGUMENTS' });
      expect(report.error?.issues?.[0]).toMatchObject({ path: 'wait_for' });
      expect(report.error?.issues?.[0].message).toMatch(/lookbehind/);
    },
    TEST_TIMEOUT_MS,
  );
});

describe("bash's built-in command policy (our own patterns, the model's command)", () => {
  it(
    'long commands that made the policy backtrack quadratically (dd dd …, rm -r -r … x, :(){ :(){ …) run promptly; dangerous ones are still refused',
    async () => {
      const report = await attack('command-policy');
      expect(report.outcome).toBe('returned');
      const result = report.result as Record<string, string>;
      expect(result.dd).toMatch(/^90000\n/);
      expect(result.rm).toMatch(/^90005\n/);
      expect(result.forkbomb).toMatch(/^100001\n/);
      expect(result['rm -rf /']).toMatch(/threw .*command policy.*recursive removal/);
      expect(result['dd if=/dev/zero of=/dev/sda']).toMatch(/threw .*dd onto a device/);
      expect(result[':(){ :|:& };:']).toMatch(/threw .*fork bomb/);
      expect(result['rm -rf --no-preserve-root x']).toMatch(/threw .*--no-preserve-root/);
      expectResponsive(report);
    },
    TEST_TIMEOUT_MS,
  );
});

describe("a manual's cli command template (our placeholder pattern, the manual's text)", () => {
  it(
    'a 126 KB template of repeated placeholder starts registers and runs without pinning the loop',
    async () => {
      const report = await attack('cli-template');
      expect(report.outcome).toBe('returned');
      expect(report.result).toEqual({ registered: true, output: expect.stringMatching(/^\s*126003\s*$/) });
      expectResponsive(report);
    },
    TEST_TIMEOUT_MS,
  );
});

describe("a manual's input schema", () => {
  it(
    "`pattern: '^(a+)+$'` and `patternProperties` refuse the hostile argument before the call; the loop stays responsive",
    async () => {
      const report = await attack('schema-http');
      expect(report.outcome).toBe('returned');
      const result = report.result as Record<string, { error?: Report['error']; result?: unknown }>;
      expect(result.pattern.error).toMatchObject({ name: 'UtcpArgumentsError', code: 'INVALID_ARGUMENTS' });
      expect(result.pattern.error?.issues?.[0]).toMatchObject({ path: 'name' });
      // A key that does not match `^(x+x+)+y$` is not constrained: the call goes through.
      expect(result.patternProperties.result).toEqual({ reached: true });
      expect(result.valid).toEqual({ reached: true });
      // Only the two accepted calls reached the server.
      expect(report.requests).toBe(2);
      expect(report.warnings).toBe(0);
      expectResponsive(report);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an OpenAPI body schema with `^([a-z]+)*$` refuses the hostile argument without reaching the server',
    async () => {
      const report = await attack('schema-openapi');
      expect(report.outcome).toBe('threw');
      expect(report.error).toMatchObject({ name: 'UtcpArgumentsError', code: 'INVALID_ARGUMENTS' });
      expect(report.requests).toBe(0);
      expectResponsive(report);
    },
    TEST_TIMEOUT_MS,
  );
});
