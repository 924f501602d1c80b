/**
 * Random hex tokens for the children one transport starts (argument-variable nonces, step markers, process-tree
 * markers), drawn from the system CSPRNG a block at a time (docs/design/transports.md#cli-fast-path).
 *
 * Why a block: after every fork, OpenSSL reseeds its generator on the next draw, so the first `randomBytes` after a
 * spawn took about 33 µs here and each later one about 7 µs; a cli call drew three tokens (about 45 µs of its main
 * thread) and every call follows a spawn. A block of 512 bytes serves about fourteen calls. The bytes are only ever
 * read in this process (a child receives its tokens through its environment), and each drawn token is wiped from
 * the block. One source per transport instance: clients never share one.
 */
import { randomFillSync } from 'node:crypto';

const BLOCK_BYTES = 512;

export class RandomTokens {
  readonly #block = Buffer.alloc(BLOCK_BYTES);
  #at = BLOCK_BYTES;

  /** `bytes` fresh random bytes (at most 512), as lowercase hex. */
  hex(bytes: number): string {
    if (!Number.isInteger(bytes) || bytes < 1 || bytes > BLOCK_BYTES)
      throw new RangeError(`a token is 1 to ${BLOCK_BYTES} bytes, not ${bytes}`);
    if (this.#at + bytes > BLOCK_BYTES) {
      randomFillSync(this.#block);
      this.#at = 0;
    }
    const end = this.#at + bytes;
    const block = this.#block;
    const token = block.toString('hex', this.#at, end);
    // A plain loop: Buffer#fill's argument checks cost more than wiping a few bytes.
    for (let i = this.#at; i < end; i++) block[i] = 0;
    this.#at = end;
    return token;
  }
}
