import { isPublicAddress } from '../src/is-public-address';

describe('isPublicAddress', () => {
  describe('refuses every non-public IPv4 range named by the contract', () => {
    it.each([
      ['loopback', '127.0.0.1'],
      ['loopback, anywhere in 127/8', '127.255.255.254'],
      ['private 10/8', '10.0.0.5'],
      ['private 172.16/12', '172.16.0.1'],
      ['private 172.16/12, upper end', '172.31.255.255'],
      ['private 192.168/16', '192.168.1.1'],
      ['shared CGNAT 100.64/10', '100.64.0.1'],
      ['shared CGNAT 100.64/10, upper end', '100.127.255.254'],
      ['link-local', '169.254.1.1'],
      ['cloud metadata', '169.254.169.254'],
      ['unspecified', '0.0.0.0'],
    ])('%s: %s', (_name, ip) => {
      expect(isPublicAddress(ip)).toBe(false);
    });
  });

  describe('refuses, conservatively, every IPv4 range that is not plain unicast', () => {
    it.each([
      ['this network 0/8', '0.1.2.3'],
      ['multicast', '224.0.0.1'],
      ['broadcast', '255.255.255.255'],
      ['reserved 240/4', '240.0.0.1'],
      ['benchmarking 198.18/15', '198.19.0.1'],
      ['documentation TEST-NET-1', '192.0.2.1'],
      ['documentation TEST-NET-2', '198.51.100.1'],
      ['documentation TEST-NET-3', '203.0.113.1'],
      ['IETF protocol assignments 192.0.0/24', '192.0.0.8'],
    ])('%s: %s', (_name, ip) => {
      expect(isPublicAddress(ip)).toBe(false);
    });
  });

  describe('reads other IPv4 spellings as the address they stand for', () => {
    it.each([
      ['decimal', '2130706433'],
      ['hex', '0x7f000001'],
      ['octal', '0177.0.0.1'],
      ['short form', '127.1'],
      ['decimal metadata', '2852039166'],
      ['hex private', '0x0a000005'],
    ])('%s: %s is not public', (_name, ip) => {
      expect(isPublicAddress(ip)).toBe(false);
    });
  });

  describe('refuses non-public IPv6, including IPv4 wrapped in IPv6', () => {
    it.each([
      ['loopback', '::1'],
      ['unspecified', '::'],
      ['unique local fc00::/7', 'fc00::1'],
      ['unique local fd00::/8', 'fd12:3456::1'],
      ['link-local', 'fe80::1'],
      ['link-local with zone id', 'fe80::1%eth0'],
      ['multicast', 'ff02::1'],
      ['documentation', '2001:db8::1'],
      ['deprecated site-local', 'fec0::1'],
      ['unassigned outside 2000::/3', '4000::1'],
      ['IPv4-mapped loopback, dotted', '::ffff:127.0.0.1'],
      ['IPv4-mapped loopback, hex', '::ffff:7f00:1'],
      ['IPv4-mapped metadata', '::ffff:169.254.169.254'],
      ['IPv4-mapped private', '::ffff:10.0.0.5'],
      ['IPv4-compatible loopback', '::127.0.0.1'],
      ['IPv4-compatible public (deprecated form)', '::93.184.216.34'],
      ['IPv4-translated (RFC 6145)', '::ffff:0:7f00:1'],
      ['NAT64 of loopback', '64:ff9b::127.0.0.1'],
      ['NAT64 of private', '64:ff9b::a00:5'],
      ['NAT64 local-use prefix', '64:ff9b:1::5db8:d822'],
      ['6to4 of private', '2002:a00:5::1'],
      ['6to4 of loopback', '2002:7f00:1::1'],
      ['bracketed loopback', '[::1]'],
    ])('%s: %s', (_name, ip) => {
      expect(isPublicAddress(ip)).toBe(false);
    });
  });

  describe('accepts public unicast addresses', () => {
    it.each([
      ['IPv4', '93.184.216.34'],
      ['IPv4 next to CGNAT', '100.128.0.1'],
      ['IPv4 next to 172.16/12', '172.32.0.1'],
      ['IPv6', '2606:4700::1111'],
      ['IPv6 bracketed', '[2606:4700::1111]'],
      ['IPv4-mapped public', '::ffff:93.184.216.34'],
      ['NAT64 (DNS64) of public', '64:ff9b::93.184.216.34'],
      ['6to4 of public', '2002:5db8:d822::1'],
    ])('%s: %s', (_name, ip) => {
      expect(isPublicAddress(ip)).toBe(true);
    });
  });

  describe('treats anything that is not an IP address as not public', () => {
    it.each(['', 'example.com', '1.2.3.4.5', '08.1.1.1', '::g', '[93.184.216.34]'])('%j', (ip) => {
      expect(isPublicAddress(ip)).toBe(false);
    });
  });
});
