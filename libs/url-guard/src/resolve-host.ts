/**
 * Resolving a callback host with a bound. Node's dns.lookup runs getaddrinfo on one of the four
 * libuv threadpool threads for as long as the nameserver takes, so four slow answers freeze every
 * other lookup, file read and crypto call of the process. Names are resolved here by c-ares
 * (dns.promises.Resolver), which runs on the event loop with its own timeout and tries, after the
 * hosts file (which c-ares does not read), and the whole resolution is capped by `deadlineMs`.
 */
import { promises as dnsPromises } from 'node:dns';
import { isIP } from 'node:net';
import { HostsFile, type HostsEntry } from './hosts-file';

export type ResolvedAddress = HostsEntry;

export interface HostResolverOptions {
  /** c-ares' timeout for one query, ms (it grows on each retry). */
  queryTimeoutMs?: number;
  /** c-ares' tries per nameserver. */
  tries?: number;
  /** The most one resolution may take, whatever the nameservers do. */
  deadlineMs?: number;
  /** Nameservers to ask instead of the system's (tests point this at a silent socket). */
  servers?: string[];
  hostsFile?: HostsFile;
}

export const DNS_DEFAULTS = { queryTimeoutMs: 1_000, tries: 2, deadlineMs: 5_000 } as const;

export type HostResolver = (hostname: string, family?: 0 | 4 | 6) => Promise<ResolvedAddress[]>;

const NO_DATA = new Set(['ENODATA', 'ENOTFOUND']);

function dnsError(code: string, hostname: string, detail = code): NodeJS.ErrnoException {
  return Object.assign(new Error(`DNS resolution of ${hostname} failed: ${detail}`), { code, hostname });
}

export function createHostResolver(opts: HostResolverOptions = {}): HostResolver {
  const queryTimeoutMs = opts.queryTimeoutMs ?? DNS_DEFAULTS.queryTimeoutMs;
  const tries = opts.tries ?? DNS_DEFAULTS.tries;
  const deadlineMs = opts.deadlineMs ?? DNS_DEFAULTS.deadlineMs;
  const hosts = opts.hostsFile ?? new HostsFile();

  async function viaDns(resolver: dnsPromises.Resolver, hostname: string, family: 0 | 4 | 6): Promise<ResolvedAddress[]> {
    const queries: Promise<ResolvedAddress[]>[] = [];
    if (family !== 6) queries.push(resolver.resolve4(hostname).then((a) => a.map((address) => ({ address, family: 4 as const }))));
    if (family !== 4) queries.push(resolver.resolve6(hostname).then((a) => a.map((address) => ({ address, family: 6 as const }))));
    const settled = await Promise.allSettled(queries);
    const found = settled.flatMap((s) => (s.status === 'fulfilled' ? s.value : []));
    if (found.length > 0) return found;
    // Report the most telling failure: a timeout or a server failure over "no such name".
    const codes = settled.map((s) => (s.status === 'rejected' ? String((s.reason as NodeJS.ErrnoException).code) : 'ENODATA'));
    const code = codes.find((c) => !NO_DATA.has(c)) ?? (codes.includes('ENOTFOUND') ? 'ENOTFOUND' : 'ENODATA');
    throw dnsError(code, hostname);
  }

  return async (hostname, family = 0) => {
    const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
    const literal = isIP(bare);
    if (literal === 4 || literal === 6) return [{ address: bare, family: literal }];
    const pinned = (await hosts.lookup(bare)).filter((e) => family === 0 || e.family === family);
    if (pinned.length > 0) return pinned;
    // A channel per resolution, so the deadline can cancel exactly this resolution's queries.
    const resolver = new dnsPromises.Resolver({ timeout: queryTimeoutMs, tries });
    if (opts.servers) resolver.setServers(opts.servers);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(dnsError('ETIMEOUT', bare, `no answer within ${deadlineMs} ms`));
        resolver.cancel();
      }, deadlineMs);
    });
    try {
      return await Promise.race([viaDns(resolver, bare, family), deadline]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** The process-wide resolver with the default bounds. */
let shared: HostResolver | undefined;
export function defaultHostResolver(): HostResolver {
  shared ??= createHostResolver();
  return shared;
}
