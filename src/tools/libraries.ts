/**
 * The coding toolset's libraries are optional peer dependencies: registerCodeTools loads the ones its tools need
 * first, so a missing one fails the registration with the `npm install` command (docs/design/packaging.md#missing-library).
 */
import { UtcpError } from '../index.js';

/** The libraries each tool imports when it runs (the others need none). */
const NEEDS: Readonly<Record<string, readonly string[]>> = {
  write: ['diff'],
  write_append: ['diff'],
  edit: ['diff'],
  apply_patch: ['diff'],
  web_fetch: ['html-to-text'],
  grep: ['ignore', 'picomatch'],
  glob: ['ignore', 'picomatch'],
  ls: ['ignore'],
};

const LOADERS: Readonly<Record<string, () => Promise<unknown>>> = {
  diff: () => import('diff'),
  'html-to-text': () => import('html-to-text'),
  ignore: () => import('ignore'),
  picomatch: () => import('picomatch'),
};

/** @throws UtcpError DEPENDENCY_MISSING naming the tools and the one command that installs what they lack. */
export async function requireToolLibraries(tools: Iterable<string>): Promise<void> {
  const users = new Map<string, string[]>();
  for (const tool of tools) for (const lib of NEEDS[tool] ?? []) users.set(lib, [...(users.get(lib) ?? []), tool]);
  const missing: string[] = [];
  let firstCause: unknown;
  for (const lib of users.keys()) {
    try {
      await LOADERS[lib]!();
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException)?.code !== 'ERR_MODULE_NOT_FOUND') throw cause;
      missing.push(lib);
      firstCause ??= cause;
    }
  }
  if (missing.length === 0) return;
  const affected = [...new Set(missing.flatMap((lib) => users.get(lib)!))];
  throw new UtcpError(
    'DEPENDENCY_MISSING',
    `registerCodeTools: the tools ${affected.join(', ')} need ${missing.join(', ')}: npm install ${missing.join(' ')}`,
    { cause: firstCause },
  );
}
