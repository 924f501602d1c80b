import { HttpStatusError } from '../../index.js';

/**
 * A model provider answered with an HTTP error status (after any retries). `bodyExcerpt` holds the
 * provider's message, never the API key; `requestId` is the provider's id of the last request.
 */
export class ModelApiError extends HttpStatusError {
  static override readonly errorKind: string = 'ModelApiError';
  override name = 'ModelApiError';
  /** e.g. `openai`, `anthropic`, `gemini`. */
  readonly provider: string;
  /** The provider's request id (`request-id` / `x-request-id` header), when it sent one. */
  readonly requestId?: string;
  /** Tries made, the last one included. */
  attempts = 1;
  constructor(
    provider: string,
    status: number,
    url: string,
    bodyExcerpt: string,
    statusText = '',
    extra: { requestId?: string } = {},
  ) {
    super(status, url, bodyExcerpt, statusText);
    this.provider = provider;
    if (extra.requestId) this.requestId = extra.requestId;
  }
}
