/**
 * The hard corners the fuzz draws from: characters PostgreSQL cannot store (NUL, lone
 * surrogates), control, bidi and invisible characters, numbers at and beyond every bound,
 * impossible dates, broken percent-encoding, overlong strings, and the wrong JSON types.
 */
import type { Rng } from './random';

export const NASTY_CHARS = [
  '\u0000', '\u0001', '\u0008', '\t', '\n', '\r', '\u001b', '\u001f', '\u007f', // C0 and DEL
  '\u0085', '\u009b', // C1 (printable by the contract's definition)
  '\ud800', '\udbff', '\udc00', '\udfff', // lone surrogates
  '\u202e', '\u202d', '\u2066', '\u2069', '\u200f', '\u061c', // bidi
  '\u200b', '\u200d', '\ufeff', '\u2028', '\u2029', // invisible and separators
  '\ufffe', '\uffff', '\ufffd', // noncharacters, replacement
  '😀', '\ud83d\udc68\u200d\ud83d\udc69', '𝔘', 'é', 'e\u0301', 'Ω', '中', 'ا', 'ß', 'İ', // well-formed, multi-unit
  '%', '%%', '%00', '%E0%A4%A', '%ED%A0%80', '%C0%AF', '%ZZ', '+', '&', '=', '#', '?', ';', '\\', '"', "'", '<', '>', '`',
] as const;

export const STRING_CORNERS = [
  '', ' ', 'a', '  padded  ', 'null', 'undefined', 'true', '0', '-0', '[]', '{}',
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '$ref', '$where',
  "' OR 1=1 --", "'; DROP TABLE transactions; --", '\\x00', '\\u0000', '${7*7}', '{{7*7}}',
  '<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', '=HYPERLINK("http://x")', '+1+1', '-1-1', '@SUM(A1)',
  'a\u0000b', '\u0000', 'x\udfff', '\ud83d', 'ok\u202eevil', '\u001b[31mred', 'line\nbreak', 'tab\there', 'del\u007f',
  '%00', '%E0%A4%A', '%%%garbage', '%ED%A0%80', '%uD800', '%', '\\', '/', '../../etc/passwd', 'http://example.com',
  'urn:uuid:7b0c0000-0000-4000-8000-000000000000',
] as const;

export const NUMBERISH = [
  '1', '100.50', '0', '0.0', '-1', '+1', '1e5', '1E5', '1e-5', '1.', '.5', '0.00000001', '0.000000001', '007',
  '999999999999999999.99999999', '1000000000000000000', '1'.repeat(19), '9'.repeat(400), 'NaN', 'Infinity', '-Infinity',
  '0x10', '0b1', '1_000', '1,5', ' 1', '1 ', '１２３', '٣', '1\u0000', '\u202e1',
] as const;

export const DATE_CORNERS = [
  '2026-11-21T10:00:00Z', '2026-11-21T10:00:00.000Z', '2026-11-21T10:00:00+01:00', '2026-02-31T00:00:00Z',
  '2026-02-29T00:00:00Z', '2024-02-29T00:00:00Z', '2026-13-01T00:00:00Z', '2026-00-10T00:00:00Z', '2026-01-01T24:00:00Z',
  '2026-12-31T23:59:60Z', '2026-01-01T00:60:00Z', '0000-01-01T00:00:00Z', '0001-01-01T00:00:00Z',
  '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59-01:00', '10000-01-01T00:00:00Z',
  '+275760-09-13T00:00:00Z', '-000001-01-01T00:00:00Z', '1969-12-31T23:59:59.999999999Z', '2026-01-01T00:00:00+16:00',
  '2026-01-01T00:00:00+15:59', '2026-01-01T00:00:00-23:59', '2026-01-01T00:00:00+24:00', '2026-01-01', '2026-01-01T00:00:00',
  '2026-01-01 00:00:00Z', '2026-01-01t00:00:00z', '2026-1-1T0:0:0Z', 'now', 'today', 'epoch', 'infinity', '-infinity',
  '1e3', '1700000000', '2026-01-01T00:00:00.0000000000Z', '２０２６-01-01T00:00:00Z',
] as const;

export const UUID_CORNERS = [
  '7b0c0000-0000-4000-8000-000000000000', '7B0C0000-0000-4000-8000-000000000000', '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff', 'urn:uuid:7b0c0000-0000-4000-8000-000000000000',
  '{7b0c0000-0000-4000-8000-000000000000}', '7b0c000000004000800000000000000', '7b0c0000000040008000000000000000',
  '7b0c0000-0000-4000-8000-00000000000g', '7b0c0000-0000-4000-8000-000000000000\n', ' 7b0c0000-0000-4000-8000-000000000000',
  '7b0c0000-0000-4000-8000-0000000000000', '7b0c0000-0000-4000-8000', '1', '-1', '',
] as const;

export const CALLBACK_URL_CORNERS = [
  'https://example.com/callbacks', 'http://127.0.0.1:9/cb', 'http://localhost/cb', 'https://example.com:443/',
  'https://example.com:0/', 'https://example.com:65535/', 'https://example.com:65536/', 'https://example.com:99999999999/',
  'https://example.com:-1/', 'https://example.com:/', 'https://example.com:0x50/', 'http://user:pass@example.com/',
  'http://user@example.com/', 'http://@example.com/', 'http://:@example.com/', 'http://example.com@evil.com/',
  'http://xn--nxasmq6b.com/', 'http://пример.рф/cb', 'http://xn--/', 'http://ex ample.com/', 'http://example.com/ a',
  'http://example.com/\u0000', 'http://exa\u0000mple.com/', 'http://example.com/%', 'http://example.com/%E0%A4%A',
  'http://example.com/%zz', 'http://exa%00mple.com/', 'http://exa%2Fmple.com/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/',
  'http://[::1', 'http://[fe80::1%25eth0]/', 'http://2130706433/', 'http://0x7f.1/', 'http://0177.0.0.1/',
  'http://169.254.169.254/latest/meta-data/', 'http://100.64.0.1/', 'http://0.0.0.0/', 'javascript:alert(1)',
  'file:///etc/passwd', 'ftp://example.com/', 'gopher://example.com/', 'data:text/plain,hi', 'http:/example.com',
  'http:\\\\example.com', 'http:///example.com', '//example.com/cb', 'example.com/cb', 'HTTP://EXAMPLE.COM/',
  'https://example.com/cb#frag', 'https://example.com/cb?x=%00', 'http://example.com\udfff/', 'http://\u202eexample.com/',
  'http://example.com/\u202e', 'http://example.com./', 'http://.example.com/', 'http://a..b/', 'http://-a.com/',
  'http://' + 'a'.repeat(64) + '.com/', 'http://' + 'a.'.repeat(130) + 'com/', 'https://example.com/' + 'p'.repeat(2030),
  'https://example.com/' + 'p'.repeat(2029), 'https://example.com/' + 'p'.repeat(5000), 'http://example.com:80:80/',
  'http://example.com\\@evil.com/', 'https://example.com/\t', '\thttps://example.com/', 'https://example.com/\r\nX: y',
] as const;

/** A string of random code points, weighted towards the nasty ones. */
export function randomText(rng: Rng, maxLength = 40): string {
  const length = rng.int(0, maxLength);
  let out = '';
  for (let i = 0; i < length; i++) {
    const r = rng.next();
    if (r < 0.3) out += rng.pick(NASTY_CHARS);
    else if (r < 0.6) out += String.fromCharCode(rng.int(0x20, 0x7e));
    else if (r < 0.8) out += String.fromCharCode(rng.int(0, 0xffff)); // includes lone surrogates
    else out += String.fromCodePoint(rng.int(0x10000, 0x10ffff));
  }
  return out;
}

/** A hostile string: a corner, random text, an overlong run, or a corner spliced into a valid value. */
export function hostileString(rng: Rng, valid: string): string {
  const r = rng.next();
  if (r < 0.2) return rng.pick(STRING_CORNERS);
  if (r < 0.4) return randomText(rng);
  if (r < 0.5) return rng.pick(['a', 'é', '😀', '\u0000', 'x']).repeat(rng.pick([39, 40, 41, 127, 128, 129, 255, 256, 257, 499, 500, 501, 2049, 20000]));
  if (r < 0.6) return rng.pick(NUMBERISH);
  if (r < 0.7) return rng.pick(DATE_CORNERS);
  const at = rng.int(0, valid.length);
  return valid.slice(0, at) + rng.pick(NASTY_CHARS) + valid.slice(at);
}

/** A JSON value of the wrong type (or a hostile one of the right type), as the text of a JSON token. */
export function hostileJsonToken(rng: Rng, valid: string): string {
  const r = rng.next();
  if (r < 0.5) return JSON.stringify(hostileString(rng, valid));
  return rng.pick([
    '0', '-0', '1', '-1', '100.5', '1e5', '1E+400', '-1e400', '5e-324', '1e-400', '123456789012345678901234567890',
    '0.1', '9007199254740993', 'true', 'false', 'null', '[]', '{}', '["1"]', '{"a":"b"}', '[null]', '""',
    '"\\u0000"', '"\\udfff"', '"\\ud800\\u0041"', '"\\u202e"', '"\\u00"', '[[[[[[[[[[[[]]]]]]]]]]]]',
    '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"polluted":1}}}',
  ]);
}
