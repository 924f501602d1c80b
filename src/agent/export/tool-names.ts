import { createHash } from 'node:crypto';

/** Longest tool name OpenAI and Anthropic accept. */
export const MAX_TOOL_NAME_LENGTH = 64;

const INVALID = /[^a-zA-Z0-9_-]/g;
const HASH_CHARS = 8;

export interface ToolNameCodecOptions {
  /** @default 64 */
  maxLength?: number;
  /** Names that no tool may take (e.g. `search_tools`). */
  reserved?: readonly string[];
}

/** The readable part of an encoded name: the manual separator becomes `__`, other invalid characters `_`. */
function readableName(name: string): string {
  const dot = name.indexOf('.');
  const joined = dot < 0 ? name : `${name.slice(0, dot)}__${name.slice(dot + 1)}`;
  return joined.replace(INVALID, '_') || 'tool';
}

function hashSuffix(name: string, attempt: number): string {
  return createHash('sha256')
    .update(attempt === 0 ? name : `${name}#${attempt}`)
    .digest('hex')
    .slice(0, HASH_CHARS);
}

/**
 * Encodes tool names for providers (`[a-zA-Z0-9_-]`, at most 64 characters) and maps them back.
 * `weather.get_forecast` becomes `weather__get_forecast`; a name that is too long or would collide
 * gets a hash suffix. One codec per run (or per exported tool list) keeps the mapping reversible.
 */
export class ToolNameCodec {
  readonly #maxLength: number;
  readonly #toWire = new Map<string, string>();
  readonly #fromWire = new Map<string, string>();
  readonly #reserved: ReadonlySet<string>;

  constructor(options: ToolNameCodecOptions = {}) {
    this.#maxLength = Math.min(options.maxLength ?? MAX_TOOL_NAME_LENGTH, 256);
    if (this.#maxLength < HASH_CHARS + 2) throw new RangeError(`maxLength must be at least ${HASH_CHARS + 2}`);
    this.#reserved = new Set(options.reserved ?? []);
  }

  /** The provider-safe name for `name`; the same input always gets the same output from this codec. */
  encode(name: string): string {
    if (this.#reserved.has(name)) return name;
    const known = this.#toWire.get(name);
    if (known !== undefined) return known;
    const base = readableName(name);
    let wire = base.length <= this.#maxLength ? base : '';
    for (let attempt = 0; wire === '' || this.#taken(wire); attempt++) {
      wire = `${base.slice(0, this.#maxLength - HASH_CHARS - 1)}_${hashSuffix(name, attempt)}`;
    }
    this.#toWire.set(name, wire);
    this.#fromWire.set(wire, name);
    return wire;
  }

  /** The original name of an encoded one, or undefined when this codec never produced it. */
  decode(wire: string): string | undefined {
    return this.#fromWire.get(wire);
  }

  #taken(wire: string): boolean {
    return this.#fromWire.has(wire) || this.#reserved.has(wire);
  }
}
