/**
 * The syntactic rules of a callback URL (docs/api.md#callback-urls), checked before any DNS. The URL is parsed
 * with the WHATWG parser, the same one the callback sender's HTTP client uses, so the host judged
 * here is the host that would be called.
 */
export const MAX_CALLBACK_URL_LENGTH = 2048;

export type SyntaxVerdict = { ok: true; url: URL } | { ok: false; reason: string };

const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
const HTTP_AUTHORITY = /^https?:\/\//i;
// The WHATWG parser silently drops tabs and newlines and trims spaces and controls, so a URL
// containing them would be stored as one string and called as another: refuse them instead.
const SPACE_OR_CONTROL = /[\u0000-\u0020\u007f]/;

export function checkCallbackUrlSyntax(raw: string): SyntaxVerdict {
  if (raw.length > MAX_CALLBACK_URL_LENGTH) {
    return refuse(`url must be at most ${MAX_CALLBACK_URL_LENGTH} characters`);
  }
  if (SPACE_OR_CONTROL.test(raw)) {
    return refuse('url must not contain spaces or control characters (percent-encode them)');
  }
  const scheme = SCHEME.exec(raw)?.[1]?.toLowerCase();
  if (scheme === undefined) return refuse('url must be absolute, starting with https:// or http://');
  if (scheme !== 'http' && scheme !== 'https') return refuse('url must use http or https');
  // `http:example.com` and `http:\\example.com` parse, but are not what anyone means to store.
  if (!HTTP_AUTHORITY.test(raw)) return refuse('url must start with https:// or http://');

  // The WHATWG parser reads `\` as `/`, where RFC 3986 parsers (the merchant's proxy, a log reader)
  // read it as data: `http://example.com\@evil.com/` is example.com to one and evil.com to another.
  if (raw.includes('\\')) return refuse('url must not contain a backslash (percent-encode it as %5C)');

  const authority = authorityOf(raw);
  // The parser skips extra slashes (`http:///example.com`), so an empty authority is refused here.
  if (authority === '') return refuse('url must include a host');
  if (authority.includes('@')) return refuse('url must not contain a user name or password');

  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('url is not a valid URL: check its host and port');
  }
  // Port 0 parses but no server listens on it: every attempt would fail.
  if (url.port === '0') return refuse('url port must be from 1 to 65535');
  // Belt and braces: whatever the parser took as userinfo is refused too.
  if (url.username !== '' || url.password !== '') {
    return refuse('url must not contain a user name or password');
  }
  return { ok: true, url };
}

/** The authority after `scheme://`, up to the path, query or fragment (the parser reads a backslash as a slash). */
function authorityOf(raw: string): string {
  return raw.replace(HTTP_AUTHORITY, '').split(/[/?#\\]/, 1)[0] ?? '';
}

function refuse(reason: string): SyntaxVerdict {
  return { ok: false, reason };
}
