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
 * - objects and arrays nested deeper than MAX_BODY_DEPTH, more than MAX_BODY_CONTAINERS of them, or
 *   one holding more than MAX_BODY_MEMBERS keys or items: 400 naming it, checked on the text before
 *   the parser builds anything.
 * - a key twice in one object, anywhere: 400 naming the repeats. JSON.parse keeps the last value,
 *   so `{"amount":"1.00","amount":"900.00"}` was a deposit of 900.00, while a proxy, a log or the
 *   merchant's own signer that reads the first value saw 1.00 (I-JSON, RFC 7493 §2.3: names MUST be unique).
 */
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { ApiError, BODY, MAX_LISTED_ERRORS, pointerKeys, pointerToken, validationFailed, type FieldError } from './errors';
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

export const DUPLICATE_KEY_MESSAGE = 'is a duplicate key: each key may appear once in an object';

/**
 * The shape a body may have, checked on its text before it is parsed: objects and arrays one inside
 * another, and members (keys or items) in one of them. The API's bodies nest two deep (metadata's
 * object in the body's) and hold at most 20 members; these bounds are far above that and far below
 * what costs. An outside audit sent 65 KB nested 5,400 deep with a key repeated 5,400 times in the
 * innermost object: naming each repeat by its full path took the gateway past its heap limit (a
 * 32 MB answer at 2,000 deep). And 63 KB of 21,000 empty objects, or an object of 6,000 keys, cost
 * the gateway 10–15 ms each to parse and collect (a flat string of the same size, under 1 ms): one
 * merchant within its rate limit held the gateway's one thread, and another's requests waited
 * p50 1.1 s.
 */
export const MAX_BODY_DEPTH = 32;
export const MAX_BODY_MEMBERS = 256;
/**
 * Objects and arrays in all. Depth and width alone left about 30,000 in 64 KiB (256 arrays of 28
 * nested ones, each 4 wide): 21 ms of the gateway's CPU each, and another merchant's requests
 * waited p50 5.8–7.6 s beside 90 a second of them (an outside audit).
 */
export const MAX_BODY_CONTAINERS = 256;

/** An open object or array while scanning: how to name it, and its keys so far or its member count. */
interface Open {
  /** Its key or index in the container it is in, as a JSON Pointer token ('' at the top). */
  token: string;
  isObject: boolean;
  /** Keys so far (objects), emptied for each new object at this depth. */
  keys: Set<string>;
  /** Objects: the next string is a key (after `{` or `,`). */
  expectKey: boolean;
  lastKey: string;
  /** Objects: the keys so far; arrays: the index of the current item (the commas so far). */
  index: number;
}

/** The JSON Pointer of the container open at depth `upTo` (built only for what is reported). */
function pointerAt(levels: Open[], upTo: number): string {
  return upTo <= 1 ? '' : `/${levels.slice(1, upTo).map((level) => level.token).join('/')}`;
}

export interface BodyShape {
  /** Beyond a bound, the first found: which, and the JSON Pointer of the container ('' for depth; the scan stops there). */
  beyond?: { bound: 'depth' | 'members' | 'containers'; path: string };
  /** The first `listed` keys that repeat an earlier key of the same object, as JSON Pointers. */
  duplicates: string[];
  /** All of them. */
  duplicateCount: number;
  /**
   * The reserved keys, as JSON Pointers: `__proto__`, and `prototype` inside an object that is the
   * value of a key `constructor` (secure-json-parse's two rules), named `…/constructor/prototype`.
   */
  reserved: string[];
}

/**
 * One pass over a body's text: its shape against MAX_BODY_DEPTH, MAX_BODY_CONTAINERS and MAX_BODY_MEMBERS, and the keys
 * that repeat an earlier key of the same object, and the reserved keys. It trusts no syntax (it runs before JSON.parse,
 * so that what is too large is never built); on text that is not JSON its duplicates mean nothing,
 * and the parser refuses it anyway. Keys compare as decoded (`"a"` and `"\u0061"` are the same
 * key). Written here rather than taken from a library: the parsers that report duplicates (a whole
 * second parser such as @humanwhocodes/momoa) build a tree of every body, where this keeps one
 * reused record per depth and builds a path only for what it reports.
 */
export function scanBody(text: string, listed = MAX_LISTED_ERRORS): BodyShape {
  const shape: BodyShape = { duplicates: [], duplicateCount: 0, reserved: [] };
  const levels: Open[] = [];
  let depth = 0;
  let containers = 0;
  const at = (upTo: number) => pointerAt(levels, upTo);
  const beyond = (bound: 'depth' | 'members' | 'containers') => {
    shape.beyond = { bound, path: bound === 'members' ? at(depth) : '' };
    return shape;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const top = depth > 0 ? levels[depth - 1]! : undefined;
      let end = i + 1;
      let escaped = false;
      for (let d = text.charCodeAt(end); d !== 0x22 && end < text.length; d = text.charCodeAt(++end)) {
        if (d === 0x5c /* \ */) {
          escaped = true;
          end++;
        }
      }
      if (top?.isObject && top.expectKey) {
        let key = text.slice(i + 1, end);
        if (escaped) {
          try {
            key = JSON.parse(text.slice(i, end + 1)) as string;
          } catch {
            // Not a JSON string: the parser refuses the body.
          }
        }
        if (++top.index > MAX_BODY_MEMBERS) return beyond('members');
        const reserved = key === '__proto__' || (key === 'prototype' && depth > 1 && levels[depth - 2]!.isObject && top.token === 'constructor');
        if (reserved && shape.reserved.length < listed) shape.reserved.push(`${at(depth)}/${pointerToken(key)}`);
        if (top.keys.has(key)) {
          if (shape.duplicateCount++ < listed) shape.duplicates.push(`${at(depth)}/${pointerToken(key)}`);
        } else top.keys.add(key);
        top.lastKey = key;
        top.expectKey = false;
      }
      i = end;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const top = depth > 0 ? levels[depth - 1]! : undefined;
      if (depth === MAX_BODY_DEPTH) return beyond('depth');
      if (++containers > MAX_BODY_CONTAINERS) return beyond('containers');
      const token = top === undefined ? '' : top.isObject ? pointerToken(top.lastKey) : String(top.index);
      const level = levels[depth];
      if (level === undefined) levels.push({ token, isObject: c === 0x7b, keys: new Set(), expectKey: true, lastKey: '', index: 0 });
      else {
        level.token = token;
        level.isObject = c === 0x7b;
        level.expectKey = true;
        level.lastKey = '';
        level.index = 0;
        if (level.keys.size > 0) level.keys.clear();
      }
      depth++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      if (depth > 0) depth--;
    } else if (c === 0x2c /* , */ && depth > 0) {
      const top = levels[depth - 1]!;
      if (top.isObject) top.expectKey = true;
      else if (++top.index === MAX_BODY_MEMBERS) return beyond('members');
    }
  }
  return shape;
}

/** Every key that repeats an earlier key of the same object (scanBody, all of them listed). */
export function duplicateKeyPaths(text: string): string[] {
  return scanBody(text, Infinity).duplicates;
}

/** The 400 for a body beyond MAX_BODY_DEPTH, MAX_BODY_CONTAINERS or MAX_BODY_MEMBERS, naming the container (the body for the first two). */
function beyondShape({ bound, path }: NonNullable<BodyShape['beyond']>): ApiError {
  const message = {
    depth: `nests objects and arrays deeper than ${MAX_BODY_DEPTH} levels`,
    members: `holds more than ${MAX_BODY_MEMBERS} keys or items`,
    containers: `holds more than ${MAX_BODY_CONTAINERS} objects and arrays in all`,
  }[bound];
  const what = path === '' ? 'The body' : `The body's ${pointerKeys(path).join('/')}`;
  return validationFailed([{ path, message }], `${what} ${message}; no request of this API needs nearly as many.`);
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
    // The shape first: what is too deep or too large is refused before the parser builds it.
    const shape = scanBody(text);
    if (shape.beyond) return done(beyondShape(shape.beyond), undefined);
    parseJson(request, text, (err, parsed) => {
      if (err) return done(err, undefined);
      if (shape.duplicateCount > 0) {
        const errors: FieldError[] = shape.duplicates.map((path) => ({ path, message: DUPLICATE_KEY_MESSAGE }));
        const listed = shape.duplicateCount > errors.length ? ` (errors lists the first ${errors.length} of ${shape.duplicateCount})` : '';
        return done(validationFailed(errors, `The body holds a key twice in one object; send each key once. See errors${listed}.`), undefined);
      }
      if (shape.reserved.length === 0) return done(null, parsed);
      const errors: FieldError[] = shape.reserved.map((path) => ({ path, message: RESERVED_KEY_MESSAGE }));
      done(validationFailed(errors, 'The body holds a reserved key (__proto__, or constructor with prototype); rename it. See errors.'), undefined);
    });
  });
}
