/**
 * Ajv's errors as what a merchant must change (STYLE: "4xx bodies say exactly what to fix"). Ajv's
 * own wording names a keyword, not what the field accepts ("must be equal to constant", "must match
 * pattern \"^…\"", "must NOT have fewer than 1 characters"), so every message here is written from
 * the failing schema instead: the values of a union of literals or an enum, a pattern's
 * description, a format's shape, a whole range or length, the fields an object takes. Every route
 * of every service validates through this one place (validatorCompiler, problem-handler).
 */
import type { ErrorObject } from 'ajv';
import { MAX_LISTED_ERRORS, pointerKeys, pointerToken, type FieldError } from './errors';

interface Schema {
  type?: unknown;
  description?: string;
  properties?: Record<string, unknown>;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
}

/** The formats the contract uses, as a merchant reads them (the checks are @dw/contracts' CONTRACT_FORMATS). */
const FORMATS: Record<string, string> = {
  'date-time': 'an RFC 3339 date-time with a time zone, e.g. "2026-11-21T10:00:00Z" (a real date, years 0001–9999)',
  uuid: 'a UUID (8-4-4-4-12 hex digits)',
};

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);
const article = (t: string) => (t === 'null' ? 'null' : /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`);
/** A value as the merchant would type it: plain words bare, anything else as JSON. */
const shown = (v: unknown) => (typeof v === 'string' && /^[\w.@:+-]+$/.test(v) ? v : JSON.stringify(v));

function oneOf(values: unknown[]): string {
  const distinct = [...new Set(values.map(shown))];
  return distinct.length === 1 ? `must be ${distinct[0]}` : `must be one of: ${distinct.join(', ')}`;
}

/** "from 1 to 100", "greater than 0", "at most 20" … of a number schema, after its noun. */
function numberRule(s: Schema): string {
  const noun = s.type === 'integer' ? 'an integer' : 'a number';
  if (s.minimum !== undefined && s.maximum !== undefined) return `${noun} from ${s.minimum} to ${s.maximum}`;
  const bounds = [
    s.minimum !== undefined ? `at least ${s.minimum}` : undefined,
    s.exclusiveMinimum !== undefined ? `greater than ${s.exclusiveMinimum}` : undefined,
    s.maximum !== undefined ? `at most ${s.maximum}` : undefined,
    s.exclusiveMaximum !== undefined ? `less than ${s.exclusiveMaximum}` : undefined,
  ].filter(Boolean);
  return bounds.length ? `${noun} ${bounds.join(' and ')}` : noun;
}

/** "1–128", "at least 1", "at most 500" … followed by the counted noun. */
function countRule(min: number | undefined, max: number | undefined, noun: string): string {
  const plural = (n: number) => (n === 1 ? noun.replace(/s$/, '') : noun);
  if (min !== undefined && max !== undefined) return min === max ? `exactly ${min} ${plural(min)}` : `${min}–${max} ${noun}`;
  if (min !== undefined) return `at least ${min} ${plural(min)}`;
  return `at most ${max} ${plural(max ?? 0)}`;
}

function describe(err: ErrorObject, noun: string): string {
  const s = (err.parentSchema ?? {}) as Schema;
  switch (err.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties': {
      const allowed = Object.keys(s.properties ?? {});
      return `is not an allowed ${noun} (${allowed.length ? `allowed: ${allowed.join(', ')}` : `no ${noun} is accepted here`})`;
    }
    case 'const':
      return oneOf([err.params.allowedValue]);
    case 'enum':
      return oneOf(err.params.allowedValues as unknown[]);
    case 'type': {
      const type = String(err.params.type);
      return type === 'integer' || type === 'number' ? `must be ${numberRule(s)}` : `must be ${article(type)}`;
    }
    case 'pattern':
      return s.description ? `must be ${lowerFirst(s.description)}` : `must match the regular expression ${String(err.params.pattern)}`;
    case 'format': {
      const format = String(err.params.format);
      return `must be ${FORMATS[format] ?? `a valid ${format}`}`;
    }
    case 'minLength':
    case 'maxLength':
      return `must be ${countRule(s.minLength, s.maxLength, 'characters')} long`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `must be ${numberRule(s)}`;
    case 'multipleOf':
      return `must be a multiple of ${String(err.params.multipleOf)}`;
    case 'minItems':
    case 'maxItems':
      return `must have ${countRule(s.minItems, s.maxItems, 'items')}`;
    case 'minProperties':
    case 'maxProperties':
      return `must have ${countRule(s.minProperties, s.maxProperties, s.properties ? 'fields' : 'keys')}`;
    case 'uniqueItems':
      return 'must not repeat an item';
    default:
      return s.description ? `must be ${lowerFirst(s.description)}` : (err.message ?? 'is refused');
  }
}

function pathOf(err: ErrorObject): string {
  // An error about an object's key (inside `propertyNames`) names the key itself.
  // Ajv's instancePath is already a JSON Pointer; a key from params is raw and is escaped here.
  if (err.propertyName !== undefined) return `${err.instancePath}/${pointerToken(err.propertyName)}`;
  if (err.keyword === 'required') return `${err.instancePath}/${pointerToken(String(err.params.missingProperty))}`;
  if (err.keyword === 'additionalProperties') return `${err.instancePath}/${pointerToken(String(err.params.additionalProperty))}`;
  if (err.keyword === 'propertyNames') return `${err.instancePath}/${pointerToken(String(err.params.propertyName))}`;
  return err.instancePath;
}

/** One message for every error Ajv reported at one path (a union's branches each report one). */
function messageAt(errs: ErrorObject[], noun: string): string {
  const first = errs[0]!;
  if (first.propertyName !== undefined) return `is not an allowed key: a key ${describe(first, noun)}`;
  const types = errs.filter((e) => e.keyword === 'type');
  // A union of literals ("deposit" | "withdraw"): every branch's value, null included when a branch is null.
  const literals = errs.flatMap((e) =>
    e.keyword === 'const' ? [e.params.allowedValue] : e.keyword === 'enum' ? (e.params.allowedValues as unknown[]) : [],
  );
  if (literals.length > 0) {
    return oneOf(types.some((e) => e.params.type === 'null') ? [...literals, null] : literals);
  }
  if (types.length > 1 && types.length === errs.length) return `must be ${types.map((e) => article(String(e.params.type))).join(' or ')}`;
  return describe(errs.find((e) => e.keyword !== 'type') ?? first, noun);
}

const NOUNS: Record<string, string> = { body: 'field', querystring: 'parameter', params: 'parameter', headers: 'header' };

/**
 * Ajv errors → one entry per offending field, its path a JSON Pointer, prefixed with the part of
 * the request (`querystring:/limit`, `params:/id`) unless it is the body.
 */
export function fieldErrors(errors: ErrorObject[], where = 'body'): FieldError[] {
  const byPath = new Map<string, ErrorObject[]>();
  for (const err of errors) {
    // These only repeat the errors found inside them, which name the field and the rule.
    if (err.keyword === 'anyOf' || err.keyword === 'oneOf' || err.keyword === 'if' || err.keyword === 'propertyNames') continue;
    const path = pathOf(err);
    const here = byPath.get(path);
    if (here) here.push(err);
    else byPath.set(path, [err]);
  }
  const noun = NOUNS[where] ?? 'field';
  return [...byPath].map(([path, errs]) => ({
    path: where === 'body' ? path : path === '' ? where : `${where}:${path}`,
    message: messageAt(errs, noun),
  }));
}

/** The part of the request a path names: [singular, plural, the whole part]. */
const PARTS: Record<string, [string, string, string]> = {
  '': ['body field', 'body fields', 'the body'],
  body: ['body field', 'body fields', 'the body'],
  querystring: ['query parameter', 'query parameters', 'the query string'],
  params: ['path parameter', 'path parameters', 'the path'],
  path: ['path parameter', 'path parameters', 'the path'],
  headers: ['header', 'headers', 'the headers'],
};

/**
 * The problem's detail for these field errors: what to fix, in one sentence a merchant can act on
 * without reading `errors` ("Fix the body field type: must be one of: deposit, withdraw."). Up to
 * three fields are spelt out; `errors` has them all.
 */
export function validationDetail(errors: FieldError[]): string {
  if (errors.length === 0) return 'Fix the request: it breaks a rule of the API.';
  const items = errors.map((e) => {
    const m = /^(\w+):(\/.*)$/.exec(e.path) ?? /^(\w+)()$/.exec(e.path);
    const where = m ? m[1]! : '';
    const pointer = m ? m[2]! : e.path;
    // The pointer as a merchant reads it: its keys unescaped (`metadata/a/b`), an empty key as "".
    const name = pointerKeys(pointer)
      .map((key) => key || '""')
      .join('/');
    return { where, name, message: e.message.replace(/\.$/, '') };
  });
  const part = (where: string) => PARTS[where] ?? [where, where, `the ${where}`];
  if (items.length === 1) {
    const { where, name, message } = items[0]!;
    return name === '' ? `Fix ${part(where)[2]}: it ${message}.` : `Fix the ${part(where)[0]} ${name}: ${message}.`;
  }
  const where = items.every((i) => i.where === items[0]!.where) ? part(items[0]!.where)[1] : 'fields';
  const spelt = items.slice(0, 3).map((i) => `${i.name || part(i.where)[2]}: ${i.message}`);
  const listed = items.length > MAX_LISTED_ERRORS ? `errors lists the first ${MAX_LISTED_ERRORS}` : 'see errors';
  const more = items.length > 3 ? `; and ${items.length - 3} more (${listed})` : '';
  return `Fix ${items.length} ${where}. ${spelt.join('; ')}${more}.`;
}
