import { HttpStatusError, UtcpArgumentsError, UtcpError } from '../../index.js';
import { errorMessage } from '../../core/guards.js';

/** The text a model reads when a tool call failed: what failed and how to recover, never a stack. */
export function describeToolError(error: unknown, modelName: string): string {
  if (error instanceof UtcpArgumentsError) {
    const issues = error.issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ');
    return `Error: invalid arguments for ${modelName}: ${issues}. Fix the arguments and call the tool again.`;
  }
  if (error instanceof HttpStatusError && error.bodyExcerpt.trim()) {
    // The response body is what the tool would have returned on success, so the model may read it too.
    return `Error: ${modelName} failed (${error.code}): ${error.message}. Response: ${error.bodyExcerpt.trim().slice(0, 1000)}`;
  }
  if (error instanceof UtcpError) return `Error: ${modelName} failed (${error.code}): ${error.message}`;
  return `Error: ${modelName} failed: ${errorMessage(error)}`;
}
