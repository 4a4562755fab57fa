/**
 * The IP address a WHATWG URL hostname stands for, or null for a name that needs DNS. The URL
 * parser has already rewritten every IPv4 spelling (`2130706433`, `0x7f000001`, `0177.0.0.1`,
 * `127.1`) to dotted decimal and IPv6 to its compressed form in brackets, so only those two
 * shapes can appear here.
 */
import { isIP } from 'node:net';

export function ipLiteralOf(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? null : bare;
}
