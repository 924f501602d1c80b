/** The `cli` transport (docs/design/transports.md#cli): command templates run in one shell, arguments passed only through the environment. */
import type { Transport, TransportContext } from '../../core/transport.js';
import { CliTransport } from './cli-transport.js';

export {
  CliTransport,
  DEFAULT_CALL_TIMEOUT_MS,
  DISCOVERY_TIMEOUT_MS,
  type CliTransportOptions,
} from './cli-transport.js';
export { DEFAULT_UNIX_ALLOWLIST, DEFAULT_WINDOWS_ALLOWLIST } from '../../process/child-env.js';

/** Creates the cli transport of one client; bash on Unix, PowerShell on Windows. */
export function createCliTransport(ctx: TransportContext): Transport {
  return new CliTransport(ctx);
}
