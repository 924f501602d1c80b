import { HttpStatusError } from '../../index.js';

/** A model provider answered with an HTTP error status. `bodyExcerpt` holds the provider's message, never the API key. */
export class ModelApiError extends HttpStatusError {
  override name = 'ModelApiError';
  /** e.g. `openai`, `anthropic`. */
  readonly provider: string;
  constructor(provider: string, status: number, url: string, bodyExcerpt: string, statusText = '') {
    super(status, url, bodyExcerpt, statusText);
    this.provider = provider;
  }
}
