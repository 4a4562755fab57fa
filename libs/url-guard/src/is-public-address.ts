/**
 * Whether an IP address is one a callback may be sent to. The rule is an allow-list, not a
 * deny-list: only what ipaddr.js classifies as plain `unicast` is public, so loopback, private,
 * CGNAT, link-local (cloud metadata), unspecified, multicast, broadcast, documentation,
 * benchmarking and every reserved range are refused without being named one by one, and a range
 * added to ipaddr.js later is refused until someone decides otherwise.
 */
import ipaddr from 'ipaddr.js';

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

/** NAT64's well-known prefix 64:ff9b::/96 (RFC 6052): the last 32 bits are the IPv4 destination. */
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
/** 6to4 (RFC 3056): 2002:AABB:CCDD::/48 reaches the IPv4 host AA.BB.CC.DD. */
const SIX_TO_FOUR = ipaddr.IPv6.parseCIDR('2002::/16');
/** IANA's global unicast block. ipaddr.js calls unassigned space such as 4000::/3 and the
 * deprecated IPv4-compatible ::a.b.c.d form `unicast`; neither reaches a merchant. */
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
const IPV4_COMPATIBLE_DOTTED = /^\[?::[^:]*\./;

/**
 * `ip` is an IPv4 or IPv6 literal, in any spelling ipaddr.js understands (`127.1`, `0x7f000001`,
 * `2130706433`, `0177.0.0.1`, `::ffff:7f00:1`, `[::1]`, zone ids). Anything that is not an IP
 * address at all is not public.
 */
export function isPublicAddress(ip: string): boolean {
  // ipaddr.js reads the deprecated IPv4-compatible `::a.b.c.d` as IPv4-mapped `::ffff:a.b.c.d`;
  // it is not an address anyone can be reached at, so refuse it before that reading.
  if (IPV4_COMPATIBLE_DOTTED.test(ip)) return false;
  const parsed = parseIp(ip);
  if (parsed === null) return false;
  return parsed.kind() === 'ipv4' ? isPublicIPv4(parsed as IPv4) : isPublicIPv6(parsed as IPv6);
}

function parseIp(ip: string): IPv4 | IPv6 | null {
  try {
    // Brackets belong to IPv6 only (`[::1]`, as in a URL); `[127.0.0.1]` is not an address.
    if (ip.startsWith('[') && ip.endsWith(']')) return ipaddr.IPv6.parse(ip.slice(1, -1));
    return ipaddr.parse(ip);
  } catch {
    return null;
  }
}

function isPublicIPv4(ip: IPv4): boolean {
  return ip.range() === 'unicast';
}

function isPublicIPv6(ip: IPv6): boolean {
  // Forms that carry an IPv4 destination are judged by that destination, so a NAT64 (DNS64)
  // answer for a public host is accepted and [::ffff:127.0.0.1] is refused like 127.0.0.1.
  const embedded = embeddedIPv4(ip);
  if (embedded !== null) return isPublicIPv4(embedded);
  return ip.match(GLOBAL_UNICAST) && ip.range() === 'unicast';
}

function embeddedIPv4(ip: IPv6): IPv4 | null {
  if (ip.isIPv4MappedAddress()) return ip.toIPv4Address();
  const bytes = ip.toByteArray();
  if (ip.match(NAT64_WELL_KNOWN)) return new ipaddr.IPv4(bytes.slice(12, 16));
  if (ip.match(SIX_TO_FOUR)) return new ipaddr.IPv4(bytes.slice(2, 6));
  return null;
}
