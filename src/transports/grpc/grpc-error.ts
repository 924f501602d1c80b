import { ToolExecutionError } from '../../core/errors.js';

/**
 * A gRPC call ended with a non-OK status. `grpcCode` is the numeric status (e.g. 5),
 * `grpcStatus` its name (e.g. "NOT_FOUND"), `details` the server's status message.
 */
export class GrpcError extends ToolExecutionError {
  /** The mark `GrpcError.isInstance` checks across package copies (docs/design/api.md#errors-across-copies). */
  static override readonly errorKind: string = 'GrpcError';
  override name = 'GrpcError';
  readonly grpcCode: number;
  readonly grpcStatus: string;
  declare readonly details: string;
  constructor(what: string, grpcCode: number, grpcStatus: string, details: string, options?: ErrorOptions) {
    const shown = details.length > 300 ? `${details.slice(0, 300)}…` : details;
    super(`${what} failed with gRPC status ${grpcStatus} (${grpcCode})${shown ? `: ${shown}` : ''}`, details, options);
    this.grpcCode = grpcCode;
    this.grpcStatus = grpcStatus;
  }
}
