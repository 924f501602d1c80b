/**
 * The `dotenv` variable loader: a `.env` file re-read whenever its mtime changes (docs/design/manual-format.md#config).
 */
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { VariableSource } from './variables.js';

/** Parses dotenv text. `${NAME}` expands from earlier keys of the file, then `env`. */
export function parseDotenv(text: string, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  const expand = (v: string) => v.replace(/\$\{([A-Za-z0-9_]+)\}/g, (_m, name: string) => out[name] ?? env[name] ?? '');
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i].trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('export ')) line = line.slice(7).trimStart();
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const key = line.slice(0, eq).trim();
    if (!/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(key)) continue;
    let rest = line.slice(eq + 1).trimStart();
    if (rest.startsWith("'")) {
      const end = rest.indexOf("'", 1);
      out[key] = end === -1 ? rest.slice(1) : rest.slice(1, end);
    } else if (rest.startsWith('"')) {
      // Double-quoted values may span lines and support \n \t \" \\ escapes.
      let body = rest.slice(1);
      let value = '';
      for (;;) {
        let j = 0;
        let closed = false;
        for (; j < body.length; j++) {
          const c = body[j];
          if (c === '\\' && j + 1 < body.length) {
            const n = body[++j];
            value += n === 'n' ? '\n' : n === 't' ? '\t' : n === 'r' ? '\r' : n;
          } else if (c === '"') {
            closed = true;
            break;
          } else value += c;
        }
        if (closed || i + 1 >= lines.length) break;
        value += '\n';
        body = lines[++i];
      }
      out[key] = expand(value);
    } else {
      const hash = rest.search(/\s#/);
      if (hash !== -1) rest = rest.slice(0, hash);
      out[key] = expand(rest.trim());
    }
  }
  return out;
}

/** A variable source backed by a dotenv file. A missing file yields no values. */
export class DotenvSource implements VariableSource {
  readonly path: string;
  #mtimeMs = -1;
  #values: Record<string, string> = {};

  constructor(envFilePath: string, rootDir: string) {
    this.path = resolve(rootDir, envFilePath);
  }

  get(key: string): string | undefined {
    this.#refresh();
    return Object.prototype.hasOwnProperty.call(this.#values, key) ? this.#values[key] : undefined;
  }

  #refresh(): void {
    let mtime: number;
    try {
      mtime = statSync(this.path).mtimeMs;
    } catch {
      this.#values = {};
      this.#mtimeMs = -1;
      return;
    }
    if (mtime === this.#mtimeMs) return;
    try {
      this.#values = parseDotenv(readFileSync(this.path, 'utf8'));
      this.#mtimeMs = mtime;
    } catch {
      this.#values = {};
    }
  }
}
