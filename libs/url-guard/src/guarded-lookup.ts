/**
 * Connect-time defence against DNS rebinding: a host that resolved to a public address when the
 * merchant saved the URL may resolve to 127.0.0.1 a minute later. The callback sender passes
 * `guardedLookup(allow)` as undici's `connect: { lookup }` (handed on to net/tls.connect), so the
 * addresses checked are exactly the addresses connected to; there is no second resolution to race.
 * Names are resolved by the bounded c-ares resolver (resolve-host.ts), never by getaddrinfo on the
 * libuv threadpool, whether or not private hosts are allowed.
 */
import type { LookupAddress, LookupAllOptions, LookupOneOptions, LookupOptions } from 'node:dns';
import { ipLiteralOf } from './ip-literal';
import { isPublicAddress } from './is-public-address';
import { PrivateAddressError } from './private-address-error';
import { defaultHostResolver, type HostResolver } from './resolve-host';

type OneCallback = (err: NodeJS.ErrnoException | null, address: string, family: number) => void;
type AllCallback = (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void;
type AnyCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** The call forms of `dns.lookup`; also assignable to `net.LookupFunction`. */
export interface LookupFunction {
  (hostname: string, callback: OneCallback): void;
  (hostname: string, family: number, callback: OneCallback): void;
  (hostname: string, options: LookupOneOptions, callback: OneCallback): void;
  (hostname: string, options: LookupAllOptions, callback: AllCallback): void;
  (hostname: string, options: LookupOptions, callback: AnyCallback): void;
}

export function guardedLookup(allowPrivateHosts: boolean, resolve: HostResolver = defaultHostResolver()): LookupFunction {
  // One loosely typed body behind the overloads, as dns.lookup itself is written.
  return ((hostname: string, optionsOrCallback: number | LookupOptions | AnyCallback, maybeCallback?: AnyCallback) => {
    const [options, callback] =
      typeof optionsOrCallback === 'function'
        ? [{}, optionsOrCallback]
        : [typeof optionsOrCallback === 'number' ? { family: optionsOrCallback } : optionsOrCallback, maybeCallback!];
    const family = options.family === 4 || options.family === 6 ? options.family : 0;
    // Resolve every address even when one is asked for, so a mixed answer is refused outright.
    resolve(hostname, family).then(
      (addresses: LookupAddress[]) => {
        const refused = allowPrivateHosts ? undefined : addresses.find((entry) => !isPublicAddress(entry.address));
        if (refused) return callback(new PrivateAddressError(hostname, refused.address), []);
        if (options.all) return callback(null, addresses);
        const first = addresses[0];
        if (!first) return callback(Object.assign(new Error(`DNS resolution of ${hostname} found no address`), { code: 'ENOTFOUND' }), []);
        callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  }) as LookupFunction;
}

/**
 * net.connect never calls `lookup` for an IP literal, so the sender calls this on the URL's
 * hostname (`[::1]` or `::1`, as WHATWG normalised it) before connecting. Host names pass: their
 * addresses are checked by guardedLookup.
 */
export function assertPublicHost(hostname: string): void {
  const literal = ipLiteralOf(hostname);
  if (literal !== null && !isPublicAddress(literal)) throw new PrivateAddressError(literal, literal);
}
