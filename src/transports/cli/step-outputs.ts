/**
 * Splits the stdout of a bash cli call into the outputs of its steps (docs/design/threat-model.md#cli-output-cap).
 * The script (build-script.ts) prints `\n<token>:<i>\n` after step i and `\n<token>:end\n` when the shell exits;
 * the token is random per call, so step output cannot fake a marker without reading the shell's environment.
 */
import { TransportError } from '../../core/errors.js';

export class StepOutputs {
  readonly #needle: Buffer;
  readonly #onStepEnd: (index: number, output: Buffer) => Promise<void>;
  readonly #steps: Buffer[][] = [[]];
  #carry: Buffer = Buffer.alloc(0);
  #ended = false;
  #unexpectedLabel: string | undefined;
  #queue: Promise<void> = Promise.resolve();

  /** `onStepEnd` runs once per finished step, in order, never concurrently. */
  constructor(token: string, onStepEnd: (index: number, output: Buffer) => Promise<void>) {
    this.#needle = Buffer.from(`\n${token}:`);
    this.#onStepEnd = onStepEnd;
  }

  /** True once the shell's end marker has been read. */
  get ended(): boolean {
    return this.#ended;
  }

  /**
   * The label of a marker that carried our token but named the wrong step: a step printed the token, so the
   * split of the output cannot be trusted (the transport then fails the call instead of returning it).
   */
  get unexpectedLabel(): string | undefined {
    return this.#unexpectedLabel;
  }

  /** The index of the step whose output is being read (the last one that started). */
  get current(): number {
    return this.#steps.length - 1;
  }

  /**
   * The output of step `index` so far. A step that never started has no output, and none is made up for it.
   * @throws TransportError for a step after the current one
   */
  output(index: number): Buffer {
    const parts = this.#steps[index];
    if (parts === undefined)
      throw new TransportError(
        `cli step ${index + 1} never ran (the shell is at step ${this.current + 1}), so it has no output`,
      );
    return Buffer.concat(parts);
  }

  /** Resolves when every `onStepEnd` started so far has finished; rejects with the first failure. */
  settled(): Promise<void> {
    return this.#queue;
  }

  push(chunk: Buffer): void {
    if (this.#ended) return;
    let data = this.#carry.length > 0 ? Buffer.concat([this.#carry, chunk]) : chunk;
    this.#carry = Buffer.alloc(0);
    for (;;) {
      const at = data.indexOf(this.#needle);
      if (at === -1) {
        // Keep what could be the start of a marker for the next chunk.
        const keep = Math.min(data.length, this.#needle.length - 1);
        this.#append(data.subarray(0, data.length - keep));
        this.#carry = Buffer.from(data.subarray(data.length - keep));
        return;
      }
      const eol = data.indexOf(0x0a, at + this.#needle.length);
      if (eol === -1) {
        this.#append(data.subarray(0, at));
        this.#carry = Buffer.from(data.subarray(at));
        return;
      }
      this.#append(data.subarray(0, at));
      const label = data.subarray(at + this.#needle.length, eol).toString('latin1');
      data = data.subarray(eol + 1);
      if (label === 'end') {
        this.#ended = true;
        return;
      }
      const index = this.current;
      if (label !== String(index)) {
        this.#unexpectedLabel ??= label;
        continue;
      }
      const output = this.output(index);
      this.#steps.push([]);
      this.#queue = this.#queue.then(() => this.#onStepEnd(index, output));
    }
  }

  /**
   * The shell's stdout is closed. Bytes held back as the possible start of a marker are output after all: a marker
   * ends with a newline, and none will follow. Without this, a last step that replaced the shell (`exec cmd`, so no
   * EXIT trap and no end marker) would lose up to the marker's length of its output.
   */
  end(): void {
    if (this.#ended) return;
    this.#append(this.#carry);
    this.#carry = Buffer.alloc(0);
  }

  #append(bytes: Buffer): void {
    if (bytes.length > 0) this.#steps[this.#steps.length - 1].push(Buffer.from(bytes));
  }
}
