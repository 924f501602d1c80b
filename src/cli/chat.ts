/** `utcp chat`: wired to the agent loop once it is available. */
import { UtcpError } from '../index.js';
import type { Common } from './commands.js';

export async function chatCommand(_c: Common, _opts: { prompt?: string; model?: string; yes: boolean; maxSteps?: number }): Promise<number> {
  throw new UtcpError('NOT_SUPPORTED', 'utcp chat is not available in this build');
}
