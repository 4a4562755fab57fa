/**
 * Request generators for every endpoint of docs/api.md through the gateway: bodies, query strings,
 * headers and callback URLs, drawn from the corners in corpus.ts. A request is either well-formed
 * HTTP with hostile content (sent with undici) or hostile HTTP itself (sent as raw bytes).
 */
import {
  CALLBACK_URL_CORNERS,
  DATE_CORNERS,
  NASTY_CHARS,
  NUMBERISH,
  UUID_CORNERS,
  hostileJsonToken,
  hostileString,
  randomText,
} from './corpus';
import { Rng } from './random';

export interface FuzzRequest {
  /** What was fuzzed, for the report: endpoint and mode. */
  label: string;
  method: string;
  /** Path and query; ASCII only unless `raw` is set. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** The complete request as bytes, for hostile HTTP framing and header bytes. */
  raw?: Buffer;
}

export interface FuzzContext {
  /** A merchant whose token is used for creates and callback URLs. */
  writerToken: string;
  /** A merchant with a few stored transactions, used for /ui/viewTransaction. */
  readerToken: string;
  readerTransactionIds: string[];
  seed: number;
}

type Endpoint =
  | 'createDeposit'
  | 'createWithdraw'
  | 'getCallbackUrls'
  | 'updateCallbackUrlDeposit'
  | 'updateCallbackUrlWithdraw'
  | 'viewTransaction'
  | 'redeliverCallback'
  | 'recoverCallbacks';
const ENDPOINT_WEIGHTS: [Endpoint, number][] = [
  ['createDeposit', 18],
  ['createWithdraw', 18],
  ['getCallbackUrls', 6],
  ['updateCallbackUrlDeposit', 10],
  ['updateCallbackUrlWithdraw', 10],
  ['viewTransaction', 38],
  ['redeliverCallback', 4],
  ['recoverCallbacks', 4],
];

function weighted<T>(rng: Rng, items: [T, number][]): T {
  const total = items.reduce((s, [, w]) => s + w, 0);
  let r = rng.next() * total;
  for (const [item, w] of items) {
    if ((r -= w) < 0) return item;
  }
  return items[items.length - 1]![0];
}

/** encodeURIComponent, except that lone surrogates (which it refuses) are written as their WTF-8 bytes. */
export function encodeLoosely(value: string): string {
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((b) => '%' + b.toString(16).toUpperCase())
        .join('');
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}

// ---- bodies ----------------------------------------------------------------------------------

function validCreateFields(rng: Rng, ctx: FuzzContext, index: number, withdraw: boolean): [string, string][] {
  const fields: [string, string][] = [
    ['amount', JSON.stringify(rng.pick(['1', '100.50', '0.00000001', '999999999999999999.99999999', '42']))],
    ['currency', JSON.stringify(rng.pick(['USD', 'USDT', 'EUR', 'ABC123XYZ0']))],
    // Valid but unusual text: C1, bidi, emoji and the like are printable by the contract.
    ['orderId', JSON.stringify(`fz-${ctx.seed}-${index}-${rng.pick(['', 'é', '😀', '\u202e', '\u0085', '<b>', '=1+1'])}`)],
  ];
  if (rng.chance(0.5)) fields.push(['description', JSON.stringify(rng.pick(['', 'plain', 'ok\u202eevil', '=cmd|', '<script>x</script>', 'ü'.repeat(500)]))]);
  if (rng.chance(0.5)) fields.push(['metadata', JSON.stringify({ k: 'v', '😀': '\u2066x', '=a': '+b' })]);
  if (withdraw) fields.push(['destination', JSON.stringify(rng.pick(['wallet-1', 'DE89 3704 0044 0532 0130 00', '0x' + 'ab'.repeat(20)]))]);
  return fields;
}

function hostileMetadata(rng: Rng): string {
  const count = rng.pick([0, 1, 2, 3, 20, 21, 25]);
  const entries: string[] = [];
  for (let i = 0; i < count; i++) {
    const key = rng.chance(0.5) ? `k${i}` : hostileString(rng, `k${i}`);
    const value = rng.chance(0.6) ? JSON.stringify(hostileString(rng, 'v')) : hostileJsonToken(rng, 'v');
    entries.push(`${JSON.stringify(key)}:${value}`);
  }
  return `{${entries.join(',')}}`;
}

const RAW_BODIES: (() => Buffer)[] = [
  () => Buffer.from(''),
  () => Buffer.from('{'),
  () => Buffer.from('}'),
  () => Buffer.from('null'),
  () => Buffer.from('[]'),
  () => Buffer.from('"x"'),
  () => Buffer.from('1'),
  () => Buffer.from('1e999'),
  () => Buffer.from('{"amount":"1"'),
  () => Buffer.from('{"amount":"1",}'),
  () => Buffer.from("{'amount':'1'}"),
  () => Buffer.from('{"amount":"1","currency":"USD","orderId":"a\u0000b"}'), // raw NUL inside a JSON string
  () => Buffer.from('\ufeff{"amount":"1","currency":"USD","orderId":"bom"}'),
  () => Buffer.from('{"amount":"1","amount":"2","currency":"USD","orderId":"dup"}'),
  () => Buffer.from('['.repeat(5000) + ']'.repeat(5000)),
  () => Buffer.from('{"a":'.repeat(3000) + '1' + '}'.repeat(3000)),
  () => Buffer.from(JSON.stringify({ amount: '1', currency: 'USD', orderId: 'big', description: 'x'.repeat(70_000) })),
  () => Buffer.concat([Buffer.from('{"amount":"1","currency":"USD","orderId":"'), Buffer.from([0xff, 0xfe, 0xc0, 0xaf, 0xed, 0xa0, 0x80]), Buffer.from('"}')]),
  () => Buffer.from('{"amount":"1","currency":"USD","orderId":"utf16"}', 'utf16le'),
  () => Buffer.from('{"__proto__":{"isAdmin":true},"amount":"1","currency":"USD","orderId":"p"}'),
  () => Buffer.from('{"constructor":{"prototype":{"x":1}},"amount":"1","currency":"USD","orderId":"c"}'),
  () => Buffer.from('{"amount":1e400,"currency":"USD","orderId":"inf"}'),
  () => Buffer.from('{"url":"http://example.com/","url":null}'),
  () => Buffer.from('{"url":"\\ud800"}'),
  () => Buffer.from('{"url":"http://example.com/\\u0000"}'),
];

function createBody(rng: Rng, ctx: FuzzContext, index: number, withdraw: boolean): Buffer {
  const r = rng.next();
  if (r < 0.15) return jsonObject(validCreateFields(rng, ctx, index, withdraw));
  if (r < 0.3) return rng.pick(RAW_BODIES)();
  const fields = validCreateFields(rng, ctx, index, withdraw);
  const mutations = rng.int(1, 3);
  for (let m = 0; m < mutations; m++) {
    const what = rng.next();
    if (what < 0.5) {
      const i = rng.int(0, fields.length - 1);
      const [key, token] = fields[i]!;
      fields[i] = [key, hostileJsonToken(rng, stringOf(token))];
    } else if (what < 0.65) {
      fields.splice(rng.int(0, fields.length - 1), 1);
    } else if (what < 0.85) {
      fields.push(['metadata', hostileMetadata(rng)]);
    } else {
      fields.push([rng.chance(0.5) ? rng.pick(['__proto__', 'constructor', 'extra', 'destination', 'id', 'status']) : randomText(rng, 10), hostileJsonToken(rng, 'x')]);
    }
  }
  return jsonObject(fields);
}

/** The string a JSON token stands for, or the token's own text (it may already be mutated). */
function stringOf(token: string): string {
  try {
    const value: unknown = JSON.parse(token);
    return typeof value === 'string' ? value : token;
  } catch {
    return token;
  }
}

function jsonObject(fields: [string, string][]): Buffer {
  return Buffer.from(`{${fields.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`);
}

function hostileUrl(rng: Rng): string {
  const r = rng.next();
  if (r < 0.55) return rng.pick(CALLBACK_URL_CORNERS);
  if (r < 0.85) {
    const base = rng.pick(['https://example.com/callbacks', 'http://127.0.0.1:8080/cb?x=1', 'https://xn--nxasmq6b.com/a']);
    const at = rng.int(0, base.length);
    return base.slice(0, at) + rng.pick([...NASTY_CHARS, '@', ':', '[', ']', ' ', '%', '..', '/']) + base.slice(at);
  }
  return `https://${randomText(rng, 20)}/${randomText(rng, 20)}`;
}

function callbackUrlBody(rng: Rng): Buffer {
  const r = rng.next();
  if (r < 0.6) return Buffer.from(`{"url":${JSON.stringify(hostileUrl(rng))}}`);
  if (r < 0.7) return Buffer.from('{"url":null}');
  if (r < 0.85) return Buffer.from(`{"url":${hostileJsonToken(rng, 'https://example.com/')}}`);
  if (r < 0.9) return Buffer.from(`{"url":"https://example.com/","${rng.pick(['extra', '__proto__', 'depositCallbackUrl'])}":1}`);
  return rng.pick(RAW_BODIES)();
}

const EVENT_ID_CORNERS = ['evt_00000000000000000000000000000000', 'evt_', 'evt_a', `evt_${'a'.repeat(60)}`, `evt_${'a'.repeat(61)}`, 'EVT_1', 'evt_-1', 'evt_1 ', ''];

function redeliverBody(rng: Rng): Buffer {
  const r = rng.next();
  if (r < 0.5) return Buffer.from(`{"eventId":${JSON.stringify(rng.pick(EVENT_ID_CORNERS))}}`);
  if (r < 0.75) return Buffer.from(`{"eventId":${hostileJsonToken(rng, 'evt_0123456789abcdef0123456789abcdef')}}`);
  if (r < 0.85) return Buffer.from(`{"eventId":"evt_1","${rng.pick(['extra', '__proto__', 'constructor'])}":1}`);
  return rng.pick(RAW_BODIES)();
}

function recoverBody(rng: Rng): Buffer {
  const r = rng.next();
  // Relative to the clock (the 14-day rule is): the seed fixes the shape, not the instant.
  const recent = () => new Date(Date.now() - rng.int(0, 20 * 86_400) * 1000).toISOString();
  const time = () => (rng.chance(0.5) ? recent() : rng.chance(0.8) ? rng.pick(DATE_CORNERS) : hostileString(rng, recent()));
  if (r < 0.6) {
    const fields = [`"since":${JSON.stringify(time())}`];
    if (rng.chance(0.4)) fields.push(`"until":${JSON.stringify(time())}`);
    if (rng.chance(0.3)) fields.push(`"type":${JSON.stringify(rng.pick(['deposit', 'withdraw', 'refund', '', 'DEPOSIT']))}`);
    return Buffer.from(`{${fields.join(',')}}`);
  }
  if (r < 0.8) return Buffer.from(`{"since":${hostileJsonToken(rng, recent())}}`);
  if (r < 0.9) return Buffer.from(`{"since":${JSON.stringify(recent())},"${rng.pick(['limit', '__proto__', 'merchantId'])}":1}`);
  return rng.pick(RAW_BODIES)();
}

// ---- queries ---------------------------------------------------------------------------------

function cursorValue(rng: Rng, ctx: FuzzContext): string {
  const r = rng.next();
  const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
  if (r < 0.45) return b64([rng.pick(DATE_CORNERS), rng.chance(0.5) ? rng.pick(ctx.readerTransactionIds) : rng.pick(UUID_CORNERS)]);
  if (r < 0.6) return b64(rng.pick([[], [1, 2], ['a'], null, {}, 'x', [null, null], ['2026-01-01T00:00:00.000Z']]));
  if (r < 0.7) return Buffer.from(Array.from({ length: rng.int(1, 60) }, () => rng.int(0, 255))).toString('base64url');
  return rng.pick(['%%%garbage', '%E0%A4%A', '%ED%A0%80', '', '=', 'a'.repeat(201), 'a'.repeat(200), '../', '%00', '+', 'eyJ']);
}

function paramValue(rng: Rng, name: string, ctx: FuzzContext): { value: string; encoded?: boolean } {
  switch (name) {
    case 'id':
      return { value: rng.chance(0.3) && ctx.readerTransactionIds.length ? rng.pick(ctx.readerTransactionIds) : rng.chance(0.7) ? rng.pick(UUID_CORNERS) : hostileString(rng, 'id') };
    case 'type':
      return { value: rng.pick(['deposit', 'withdraw', 'DEPOSIT', '', 'refund', 'deposit\u0000', 'deposit,withdraw']) };
    case 'status':
      return { value: rng.pick(['pending', 'processing', 'completed', 'failed', 'succeeded', '', 'Pending', 'pending\u202e']) };
    case 'orderId':
      return { value: hostileString(rng, 'order-1') };
    case 'from':
    case 'to':
      return { value: rng.chance(0.8) ? rng.pick(DATE_CORNERS) : hostileString(rng, '2026-01-01T00:00:00Z') };
    case 'limit':
      return { value: rng.pick(['1', '20', '100', '0', '101', '-1', '1e2', '1.5', '1.0', 'abc', '', ' 1', '0x10', '99999999999999999999', '1e400', 'NaN', ...NUMBERISH]) };
    case 'cursor':
      return { value: cursorValue(rng, ctx), encoded: true };
    default:
      return { value: hostileString(rng, 'x') };
  }
}

function viewQuery(rng: Rng, ctx: FuzzContext): string {
  const names = ['id', 'type', 'status', 'orderId', 'from', 'to', 'limit', 'cursor'];
  const parts: string[] = [];
  const count = rng.int(0, 4);
  for (let i = 0; i < count; i++) {
    const name = rng.chance(0.9) ? rng.pick(names) : rng.pick(['unknown', '__proto__', 'id[]', 'limit[0]', encodeLoosely(randomText(rng, 6))]);
    const { value, encoded } = paramValue(rng, name, ctx);
    // Mostly well-encoded; sometimes the value goes in as-is, broken percent-encoding and all.
    const text = encoded || rng.chance(0.2) ? value.replace(/[^\x21-\x7e]/g, (c) => encodeLoosely(c)).replace(/[#]/g, '%23') : encodeLoosely(value);
    parts.push(rng.chance(0.05) ? name : `${name}=${text}`);
  }
  if (rng.chance(0.05)) parts.push(rng.pick(['&&', '=', '==', '&=&', '%', '%%', '%E0%A4%A=1', 'a=%FF']));
  return parts.length ? `?${parts.join('&')}` : rng.chance(0.1) ? '?' : '';
}

// ---- headers ---------------------------------------------------------------------------------

const ACCEPTS = [
  'application/json', 'text/html', 'text/csv', '*/*', '', 'text/html;q=0.1, text/csv;q=0.9', 'text/csv, application/json',
  'application/xml', 'application/problem+json', 'text/*', 'application/json;q=0', 'garbage/;;;', 'text/html; charset=utf-8',
];
const CONTENT_TYPES = [
  'application/json; charset=utf-8', 'application/JSON', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1',
  'application/json; charset=utf-16', 'application/problem+json', 'application/json;;;', 'multipart/form-data; boundary=x', 'application/json-seq',
  'application/vnd.api+json', ' application/json', 'application/json, text/plain', '',
];
const REQUEST_IDS = ['', 'fuzz-id', 'a'.repeat(128), 'a'.repeat(129), 'a'.repeat(8000), '<script>', '../../x', 'id with space', '"quoted"', '%00', '\u00e9t\u00e9'];

function headersFor(rng: Rng, token: string, hasBody: boolean): Record<string, string> {
  const headers: Record<string, string> = {};
  const t = rng.next();
  if (t < 0.93) headers.serviceApiToken = token;
  else if (t < 0.98) headers.serviceApiToken = rng.pick(['', 'dwk_unknown', 'x'.repeat(600), token + 'x', token.slice(0, -1), ' ' + token]);
  if (hasBody) headers['content-type'] = rng.chance(0.85) ? 'application/json' : rng.pick(CONTENT_TYPES);
  if (rng.chance(0.3)) headers['x-request-id'] = rng.pick(REQUEST_IDS);
  if (rng.chance(0.1)) headers.traceparent = rng.pick(['00-' + '0'.repeat(32) + '-' + '0'.repeat(16) + '-01', 'garbage', '00-zz-zz-zz', 'ff-' + 'a'.repeat(32) + '-' + 'b'.repeat(16) + '-ff']);
  if (rng.chance(0.1)) headers['x-merchant-id'] = rng.pick(['7b0c0000-0000-4000-8000-000000000000', 'not-a-uuid', '']);
  if (rng.chance(0.05)) headers['x-forwarded-for'] = rng.pick(['1.2.3.4', 'garbage', '::1, 127.0.0.1', 'x'.repeat(1000)]);
  if (rng.chance(0.05)) headers['idempotency-key'] = randomText(rng, 10).replace(/[^\x20-\x7e]/g, '?');
  // Header values must be printable ASCII here; hostile header bytes go through the raw mode.
  for (const [k, v] of Object.entries(headers)) headers[k] = v.replace(/[^\x20-\x7e]/g, '?').trim();
  return headers;
}

// ---- raw HTTP --------------------------------------------------------------------------------

function rawRequest(rng: Rng, req: FuzzRequest): Buffer {
  const headerLines = Object.entries(req.headers).map(([k, v]) => Buffer.from(`${k}: ${v}\r\n`));
  let requestLine = Buffer.from(`${req.method} ${req.path} HTTP/1.1\r\n`);
  const extra: Buffer[] = [];
  let body = req.body ?? Buffer.alloc(0);
  let lengthHeader: Buffer | null = Buffer.from(`content-length: ${body.length}\r\n`);
  switch (rng.int(0, 12)) {
    case 0: // latin1 and other non-ASCII bytes in a header value
      extra.push(Buffer.concat([Buffer.from('x-request-id: caf'), Buffer.from([0xe9, 0xff, 0x80]), Buffer.from('\r\n')]));
      break;
    case 1: // control characters in a header value
      extra.push(Buffer.from(`x-request-id: a${rng.pick(['\u0000', '\u0001', '\u007f', '\u001b'])}b\r\n`, 'latin1'));
      break;
    case 2: // headers over the 16 KiB limit
      extra.push(Buffer.from(`x-request-id: ${'a'.repeat(rng.pick([16_000, 20_000, 70_000]))}\r\n`));
      break;
    case 3: // raw UTF-8 (and broken UTF-8) in the request target
      requestLine = Buffer.concat([Buffer.from(`${req.method} /ui/viewTransaction?orderId=`), Buffer.from(rng.pick(['é😀', '\u202e']), 'utf8'), Buffer.from([0xed, 0xa0, 0x80, 0xff]), Buffer.from(' HTTP/1.1\r\n')]);
      break;
    case 4: // smuggling shapes: both framings, or two different lengths
      if (req.body === undefined) extra.push(Buffer.from('content-length: 0\r\ncontent-length: 1\r\n'));
      else extra.push(Buffer.from(rng.chance(0.5) ? 'transfer-encoding: chunked\r\n' : `content-length: ${body.length + 1}\r\n`));
      break;
    case 5: // a broken chunked body
      lengthHeader = Buffer.from('transfer-encoding: chunked\r\n');
      body = Buffer.from(rng.pick(['zz\r\nabc\r\n0\r\n\r\n', `${Math.max(1, body.length - 1).toString(16)}\r\n${body.toString('latin1')}\r\n0\r\n\r\n`, '5\r\n{"a":\r\n0\r\n\r\n']), 'latin1');
      break;
    case 6: // obsolete line folding and a header name with a space
      extra.push(Buffer.from(rng.chance(0.5) ? 'x-folded: a\r\n b\r\n' : 'bad header: x\r\n'));
      break;
    case 7: // HTTP/1.0, lower-case method, absolute-form target
      requestLine = Buffer.from(rng.pick([`${req.method} ${req.path} HTTP/1.0\r\n`, `${req.method.toLowerCase()} ${req.path} HTTP/1.1\r\n`, `${req.method} http://example.com${req.path} HTTP/1.1\r\n`]));
      break;
    case 8: // a Connection header naming the token, so a proxy would drop it
      extra.push(Buffer.from('connection: close, serviceapitoken, x-request-id\r\n'));
      break;
    case 9: // a body shorter than announced is cut; a longer one is refused; here: a short one
      lengthHeader = Buffer.from(`content-length: ${Math.max(0, body.length - 3)}\r\n`);
      break;
    case 10: // a bare LF line ending and a space before the colon
      extra.push(Buffer.from('x-a: b\nx-c : d\r\n'));
      break;
    case 11: // connection-level headers a client may send: the gateway answers them, never forwards them
      extra.push(Buffer.from(rng.pick(['expect: 100-continue\r\n', 'keep-alive: timeout=5, max=100\r\n', 'upgrade: h2c\r\n', 'te: trailers\r\n', 'trailer: x-checksum\r\n', 'proxy-connection: keep-alive\r\n', 'expect: 100-continue\r\nkeep-alive: 300\r\nupgrade: websocket\r\n'])));
      break;
    default: // a token with non-ASCII bytes
      extra.push(Buffer.concat([Buffer.from('serviceApiToken: dwk_'), Buffer.from([0xc3, 0xa9, 0x00]), Buffer.from('\r\n')]));
  }
  return Buffer.concat([
    requestLine,
    Buffer.from('host: 127.0.0.1\r\n'),
    ...headerLines,
    ...(req.body !== undefined && lengthHeader ? [lengthHeader] : []),
    ...extra,
    Buffer.from('connection: close\r\n\r\n'),
    body,
  ]);
}

// ---- one request -----------------------------------------------------------------------------

/** Request `index` of the run with `ctx.seed`: the same pair always gives the same request. */
export function fuzzRequest(ctx: FuzzContext, index: number): FuzzRequest {
  const rng = new Rng(ctx.seed, index);
  const endpoint = weighted(rng, ENDPOINT_WEIGHTS);
  let req: FuzzRequest;
  switch (endpoint) {
    case 'createDeposit':
    case 'createWithdraw': {
      const body = createBody(rng, ctx, index, endpoint === 'createWithdraw');
      req = { label: endpoint, method: 'POST', path: `/api/${endpoint}`, headers: headersFor(rng, ctx.writerToken, true), body };
      break;
    }
    case 'updateCallbackUrlDeposit':
    case 'updateCallbackUrlWithdraw':
      req = { label: endpoint, method: 'PUT', path: `/api/${endpoint}`, headers: headersFor(rng, ctx.writerToken, true), body: callbackUrlBody(rng) };
      break;
    case 'redeliverCallback':
      req = { label: endpoint, method: 'POST', path: `/api/${endpoint}`, headers: headersFor(rng, ctx.writerToken, true), body: redeliverBody(rng) };
      break;
    case 'recoverCallbacks':
      req = { label: endpoint, method: 'POST', path: `/api/${endpoint}`, headers: headersFor(rng, ctx.writerToken, true), body: recoverBody(rng) };
      break;
    case 'getCallbackUrls':
      req = { label: endpoint, method: 'GET', path: `/api/getCallbackUrls${rng.chance(0.2) ? viewQuery(rng, ctx) : ''}`, headers: headersFor(rng, ctx.writerToken, false) };
      break;
    default: {
      const headers = headersFor(rng, ctx.readerToken, false);
      headers.accept = rng.chance(0.85) ? rng.pick(['application/json', 'application/json', 'text/html', 'text/csv']) : rng.pick(ACCEPTS);
      req = { label: `viewTransaction ${headers.accept || '(no accept)'}`, method: 'GET', path: `/ui/viewTransaction${viewQuery(rng, ctx)}`, headers };
    }
  }
  if (rng.chance(0.03)) req.method = rng.pick(['PATCH', 'DELETE', 'OPTIONS', 'HEAD', req.method === 'GET' ? 'POST' : 'GET']);
  // Broken percent-encoding in the path itself, which the router refuses before any route runs.
  if (rng.chance(0.03)) {
    const q = req.path.indexOf('?');
    const [path, query] = q === -1 ? [req.path, ''] : [req.path.slice(0, q), req.path.slice(q)];
    req.path = path + rng.pick(['%', '%ZZ', '%E0%A4%A', '%ED%A0%80', '/%', '%2']) + query;
  }
  if (rng.chance(0.1)) {
    req.raw = rawRequest(rng, req);
    req.label += ' (raw HTTP)';
  }
  return req;
}
