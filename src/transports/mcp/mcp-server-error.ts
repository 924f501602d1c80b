import { TransportError } from '../../core/errors.js';

/** Most of the stderr tail shown in a message, in characters (the whole ~4 KiB tail is on `stderrTail`). */
const STDERR_IN_MESSAGE = 1000;

/** An MCP server could not be started, or its connection failed. Carries the tail of a stdio server's stderr. */
export class McpServerError extends TransportError {
  static override readonly errorKind: string = 'McpServerError';
  override name = 'McpServerError';
  readonly server: string;
  /** The last ~4 KiB the server wrote to stderr (stdio servers), else "". */
  readonly stderrTail: string;
  /** The HTTP status when an HTTP server refused a request (its JSON-RPC error message is in the message). */
  readonly status: number | undefined;
  /** @internal A stdio server exited during the protocol version probe (the session retries with the legacy handshake). */
  exitedDuringProbe = false;
  /** @internal An HTTP server refused the protocol version probe (the session retries with the legacy handshake). */
  probeRefused = false;
  constructor(server: string, message: string, stderrTail = '', options?: ErrorOptions & { status?: number }) {
    const tail = stderrTail.trim();
    const shown = tail.length > STDERR_IN_MESSAGE ? `…${tail.slice(-STDERR_IN_MESSAGE)}` : tail;
    super(shown ? `${message}; server stderr: ${shown}` : message, options);
    this.server = server;
    this.stderrTail = stderrTail;
    this.status = options?.status;
  }
}
