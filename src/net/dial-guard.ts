/**
 * The dial guard (docs/design/threat-model.md#dial-guard): for tools of a
 * remote-sourced manual, the ADDRESS a connection is about to use is checked, after name resolution,
 * so a host name that resolves to loopback (`/etc/hosts` aliases, public names pointing at 127.0.0.1)
 * is refused like a loopback literal. Used by the HTTP dispatcher, WebSocket, TCP and UDP.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { onAbort } from '../core/deadline.js';
import { UrlPolicyError } from '../core/errors.js';

const noop = () => {};

/** `dns.lookup`'s shape (what `net.connect({ lookup })` and undici's connector accept). */
export type LookupFunction = (
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

/** Loopback and "this host" addresses: what a remote-sourced manual may never dial. */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addSubnet('0.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addAddress('::', 'ipv6');
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');
LOOPBACK.addSubnet('::ffff:0.0.0.0', 104, 'ipv6');

/** Whether an IP address (v4 or v6, brackets allowed) is loopback-like. Non-addresses are false. */
export function isLoopbackAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(bare);
  if (family === 0) return false;
  return LOOPBACK.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

function refused(host: string, address: string, what: string): UrlPolicyError {
  return new UrlPolicyError(
    `${what}: ${host} resolves to the loopback address ${address}; a tool from a remote manual may not reach loopback`,
  );
}

export interface DialGuardOptions {
  /** Refuse loopback addresses (tools of a remote-sourced manual). Without it only `closing` applies. */
  remote: boolean;
  /** Resolver to use. @default dns.lookup */
  lookup?: LookupFunction;
  /** When it aborts, pending lookups fail at once (the dispatcher/transport is closing). */
  closing?: AbortSignal;
  /** Names the check in messages. */
  what?: string;
}

/**
 * A `lookup` for `net.connect`/`tls.connect`/undici: resolves with `options.lookup`, then refuses every
 * answer holding a loopback address when `remote`. A pending lookup fails as soon as `closing` aborts.
 */
export function guardedLookup(options: DialGuardOptions): LookupFunction {
  const base = (options.lookup ?? dnsLookup) as LookupFunction;
  const what = options.what ?? 'Connection';
  return (hostname, lookupOptions, callback) => {
    let done = false;
    let offClosing = noop;
    const finish = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => {
      if (done) return;
      done = true;
      offClosing();
      callback(error, address, family);
    };
    const onClosing = () => {
      const error = new Error(`${what}: name resolution of ${hostname} cancelled (closing)`) as NodeJS.ErrnoException;
      error.code = 'ECANCELLED';
      finish(error, lookupOptions.all ? [] : '', undefined);
    };
    if (options.closing?.aborted) return onClosing();
    if (options.closing) offClosing = onAbort(options.closing, onClosing);
    base(hostname.trim(), lookupOptions, (error, address, family) => {
      if (error) return finish(error, address, family);
      if (options.remote) {
        const list = Array.isArray(address) ? address.map((a) => a.address) : [address];
        const bad = list.find((a) => isLoopbackAddress(a));
        if (bad !== undefined)
          return finish(
            refused(hostname, bad, what) as unknown as NodeJS.ErrnoException,
            lookupOptions.all ? [] : '',
            undefined,
          );
      }
      finish(null, address, family);
    });
  };
}

/**
 * The same rule for a host that is already an IP literal (no lookup happens for those): throws
 * `UrlPolicyError` when `remote` and the literal is loopback-like. Host names pass (their lookup is guarded).
 */
export function assertDialAllowed(host: string, remote: boolean, what = 'Connection'): void {
  if (remote && isLoopbackAddress(host.trim())) throw refused(host, host.trim(), what);
}
