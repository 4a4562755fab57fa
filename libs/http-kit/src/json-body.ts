/**
 * The one parser of request bodies (application/json) every service uses. In order, it refuses:
 *
 * - on a route that wants the gateway's proof, bytes other than those the proof covers: 401
 *   (merchant-scope.ts). Checked on the raw bytes before anything else reads them.
 * - any content coding (`Content-Encoding: gzip`, `br`…): 415. Nothing here decompresses, so a
 *   gzip body failed as "not UTF-8" (400) and a plain body labelled gzip was taken as it was.
 * - a charset other than UTF-8 (`charset=iso-8859-1`, `utf-16`…): 415. JSON is UTF-8 (RFC 8259
 *   §8.1); decoding Latin-1 bytes as UTF-8 would store other text than the client meant.
 * - bytes that are not UTF-8: 400. Fastify's parser decodes with replacement, so "a\xff" and
 *   "a\xfe" would both arrive as "a\ufffd": one orderId for two different requests (the second a
 *   replay of the first) and a stored value that is not what was sent.
 * - a reserved key, `__proto__` or `constructor` holding `prototype`, anywhere: 400 naming each.
 *   Such a body is valid JSON, but an object built from it can poison prototypes once copied or
 *   merged, so it is refused as a rule of the input (it was a misleading "not valid JSON").
 * - a key twice in one object, anywhere: 400 naming each repeat. JSON.parse keeps the last value,
 *   so `{"amount":"1.00","amount":"900.00"}` was a deposit of 900.00, while a proxy, a log or the
 *   merchant's own signer that reads the first value saw 1.00 (I-JSON, RFC 7493 §2.3: names MUST be unique).
 */
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { ApiError, BODY, pointerToken, validationFailed, type FieldError } from './errors';
import { refuseUnprovenBody } from './merchant-scope';

/** A parameter of a media type (RFC 9110 §5.6.6), its value a quoted-string or anything up to the next `;`. */
const PARAMETER = /;\s*([^;=\s]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)/g;
/** The names of UTF-8 a client may give, compared case-insensitively. */
const UTF8_CHARSETS = new Set(['utf-8', 'utf8']);

export const RESERVED_KEY_MESSAGE = 'is a reserved key';

function charsetsOf(contentType: string): string[] {
  const charsets: string[] = [];
  for (const [, name, value] of contentType.matchAll(PARAMETER)) {
    if (name!.toLowerCase() !== 'charset') continue;
    const v = value!.trim();
    charsets.push(v.startsWith('"') ? v.slice(1, -1).replace(/\\(.)/g, '$1') : v);
  }
  return charsets;
}

function unsupportedMediaType(detail: string, headers?: Record<string, string>): ApiError {
  return new ApiError(415, 'unsupported_media_type', detail, undefined, headers);
}

/** Refuses a body whose bytes are not plain UTF-8 JSON, before anything reads them. */
function checkEncoding(contentEncoding: string | undefined, contentType: string | undefined): ApiError | undefined {
  // The usual request, no coding and no media type parameter, costs no parsing (every create comes here twice).
  if (contentEncoding === undefined && (contentType === undefined || !contentType.includes(';'))) return undefined;
  const codings = (contentEncoding ?? '').split(',').map((c) => c.trim().toLowerCase()).filter(Boolean);
  if (codings.some((c) => c !== 'identity')) {
    // RFC 7694 §3: a 415 for a content coding says which codings are accepted.
    return unsupportedMediaType('Send the body uncompressed: no Content-Encoding other than identity is accepted.', { 'accept-encoding': 'identity' });
  }
  if (charsetsOf(contentType ?? '').some((c) => !UTF8_CHARSETS.has(c.toLowerCase()))) {
    return unsupportedMediaType('Send the body as application/json in UTF-8: no other charset is accepted.');
  }
  return undefined;
}

/**
 * Every reserved key in a parsed body, as a JSON Pointer: `__proto__`, and `constructor` when it
 * holds an object with a `prototype` key (secure-json-parse's two rules). Iterative: a 64 KiB body
 * may nest 30,000 deep.
 */
export function reservedKeyPaths(body: unknown): string[] {
  const found: string[] = [];
  const pending: [unknown, string][] = [[body, '']];
  while (pending.length > 0) {
    const [node, path] = pending.pop()!;
    if (node === null || typeof node !== 'object') continue;
    const isArray = Array.isArray(node);
    const entries: [string, unknown][] = isArray ? node.map((v, i) => [String(i), v]) : Object.entries(node);
    for (const [key, value] of entries) {
      const here = `${path}/${pointerToken(key)}`;
      if (!isArray && key === '__proto__') found.push(here);
      else if (!isArray && key === 'constructor' && value !== null && typeof value === 'object' && Object.hasOwn(value, 'prototype')) {
        found.push(`${here}/prototype`);
      } else pending.push([value, here]);
    }
  }
  return found;
}

/**
 * Whether the text of a body may hold a reserved key: only if it spells `__proto__` or
 * `constructor`, or has a \u escape that could spell either. Most bodies have none of these and
 * skip the walk of the parsed object.
 */
function mayHoldReservedKey(text: string): boolean {
  return text.includes('__proto__') || text.includes('constructor') || text.includes('\\u');
}

export const DUPLICATE_KEY_MESSAGE = 'is a duplicate key: each key may appear once in an object';

/** An open object or array while scanning: where it is, and its keys so far or its next index. */
interface Open {
  path: string;
  keys: Set<string> | null;
  /** Objects: the next string is a key (after `{` or `,`). */
  expectKey: boolean;
  lastKey: string;
  index: number;
}

/**
 * Every key that repeats an earlier key of the same object, as a JSON Pointer, from the text of a
 * body JSON.parse has accepted (so the scan can trust its syntax). Keys compare as decoded
 * (`"a"` and `"\u0061"` are the same key). Written here rather than taken from a library: the
 * parsers that report duplicates (a whole second parser such as @humanwhocodes/momoa) would parse
 * every body twice, where this is one pass over the text that keeps only the open containers'
 * keys; iterative, like reservedKeyPaths, for bodies nested 30,000 deep.
 */
export function duplicateKeyPaths(text: string): string[] {
  const found: string[] = [];
  const open: Open[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = i + 1;
      let escaped = false;
      for (let d = text.charCodeAt(end); d !== 0x22; d = text.charCodeAt(++end)) {
        if (d === 0x5c /* \ */) {
          escaped = true;
          end++;
        }
      }
      const top = open[open.length - 1];
      if (top?.keys && top.expectKey) {
        const key = escaped ? (JSON.parse(text.slice(i, end + 1)) as string) : text.slice(i + 1, end);
        if (top.keys.has(key)) found.push(`${top.path}/${pointerToken(key)}`);
        else top.keys.add(key);
        top.lastKey = key;
        top.expectKey = false;
      }
      i = end;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const top = open[open.length - 1];
      const path = top === undefined ? '' : `${top.path}/${top.keys ? pointerToken(top.lastKey) : top.index}`;
      open.push({ path, keys: c === 0x7b ? new Set() : null, expectKey: true, lastKey: '', index: 0 });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      open.pop();
    } else if (c === 0x2c /* , */) {
      const top = open[open.length - 1]!;
      if (top.keys) top.expectKey = true;
      else top.index++;
    }
  }
  return found;
}

/** Replaces Fastify's application/json parser (and its text/plain one) with the rules above. */
export function useStrictJsonParser(app: FastifyInstance): void {
  // Only JSON bodies are accepted; Fastify's default text/plain parser would turn 415s into 400s.
  app.removeContentTypeParser('text/plain');
  // Reserved keys are found below, so that the answer can name them.
  const parseJson = app.getDefaultJsonParser('ignore', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const unproven = refuseUnprovenBody(request, body as Buffer);
    if (unproven) return done(unproven, undefined);
    const refused = checkEncoding(request.headers['content-encoding'], request.headers['content-type']);
    if (refused) return done(refused, undefined);
    if (!isUtf8(body as Buffer)) {
      const detail = 'The body is not valid UTF-8.';
      return done(validationFailed([{ path: BODY, message: detail }], detail), undefined);
    }
    const text = (body as Buffer).toString('utf8');
    parseJson(request, text, (err, parsed) => {
      if (err) return done(err, undefined);
      const duplicates = duplicateKeyPaths(text);
      if (duplicates.length > 0) {
        const errors: FieldError[] = duplicates.map((path) => ({ path, message: DUPLICATE_KEY_MESSAGE }));
        return done(validationFailed(errors, 'The body holds a key twice in one object; send each key once. See errors.'), undefined);
      }
      const reserved = mayHoldReservedKey(text) ? reservedKeyPaths(parsed) : [];
      if (reserved.length === 0) return done(null, parsed);
      const errors: FieldError[] = reserved.map((path) => ({ path, message: RESERVED_KEY_MESSAGE }));
      done(validationFailed(errors, 'The body holds a reserved key (__proto__, or constructor with prototype); rename it. See errors.'), undefined);
    });
  });
}
