/**
 * Settings as TypeBox schemas, validated by env-schema (Ajv: type coercion, defaults, ranges). Every
 * service reads its whole configuration once at boot; a wrong or missing value stops the process
 * before it listens, with one line per variable that names it and says what it must be.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import envSchema from 'env-schema';
import Ajv from 'ajv';

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export type Env = Record<string, string | undefined>;

/** One environment variable: its schema (default, range, description for the README) and how its value is used. */
export interface Setting<T> {
  readonly name: string;
  readonly schema: TSchema;
  /** Never echoed in an error message. */
  readonly secret?: boolean;
  /** Unset and without default: the value is undefined instead of a "required" error. */
  readonly optional?: boolean;
  /** What the README says when the default is not the whole story (`0 (off); npm start: 3000`). */
  readonly docDefault?: string;
  /** Runs on the validated value. */
  readonly finish?: (value: never) => T;
  /** Phantom: the value's type. */
  readonly __type?: T;
}

const setting = <T>(name: string, schema: TSchema, more: Partial<Setting<T>> = {}): Setting<T> => ({ name, schema: defined(schema), ...more });

/** Schema options left undefined are dropped: Ajv checks a schema's keywords against its meta-schema. */
function defined<T extends object>(schema: T): T {
  for (const key of Object.keys(schema) as Array<keyof T>) if (schema[key] === undefined) delete schema[key];
  return schema;
}

type Doc = { description?: string; docDefault?: string };

export function int(name: string, opts: { default?: number; min?: number; max?: number } & Doc = {}): Setting<number> {
  const { min = 0, max = Number.MAX_SAFE_INTEGER, default: def, description, docDefault } = opts;
  return setting(name, Type.Integer({ minimum: min, maximum: max, default: def, description }), { docDefault });
}

export function port(name: string, def: number, doc: Doc = {}): Setting<number> {
  return int(name, { default: def, min: 0, max: 65535, ...doc });
}

export function str(name: string, opts: { default?: string } & Doc = {}): Setting<string> {
  return setting(name, Type.String({ default: opts.default, description: opts.description }), { docDefault: opts.docDefault });
}

export function optionalStr(name: string, doc: Doc = {}): Setting<string | undefined> {
  return setting(name, Type.String({ description: doc.description }), { optional: true, docDefault: doc.docDefault });
}

export function bool(name: string, def: boolean, doc: Doc = {}): Setting<boolean> {
  return setting(name, Type.Unsafe<boolean>({ type: 'string', enum: ['true', 'false'], default: String(def), description: doc.description }), {
    finish: ((v: string) => v === 'true') as (v: never) => boolean,
    docDefault: doc.docDefault,
  });
}

/** An absolute URL of one of `protocols`; a trailing slash is dropped. */
export function url(name: string, opts: { default?: string; protocols: string[] } & Doc): Setting<string> {
  const schema = Type.String({ format: 'url', pattern: `^(${opts.protocols.join('|')})://`, default: opts.default, description: opts.description });
  return setting(name, schema, { finish: trimSlash as (v: never) => string, docDefault: opts.docDefault });
}

/** A URL that may be left unset (the feature it enables is then off). */
export function optionalUrl(name: string, protocols: string[], doc: Doc = {}): Setting<string | undefined> {
  return { ...url(name, { protocols, ...doc }), optional: true };
}

export function intList(name: string, opts: { default: number[]; min?: number; max?: number; minLength?: number } & Doc): Setting<number[]> {
  const items = Type.Integer({ minimum: opts.min ?? 0, maximum: opts.max ?? Number.MAX_SAFE_INTEGER });
  return setting(name, Type.Array(items, { minItems: opts.minLength ?? 1, default: opts.default, description: opts.description }), {
    docDefault: opts.docDefault,
  });
}

export function oneOf<T extends string>(name: string, values: readonly T[], def: T, doc: Doc = {}): Setting<T> {
  return setting(name, Type.Unsafe<T>({ type: 'string', enum: [...values], default: def, description: doc.description }), { docDefault: doc.docDefault });
}

/** A comma-separated list of secrets, each at least `minLength` characters; required. */
export function secretList(name: string, opts: { minLength: number; hint: string } & Doc): Setting<string[]> {
  const schema = Type.Array(Type.String({ minLength: opts.minLength }), { minItems: 1, description: opts.description, hint: opts.hint });
  return setting(name, schema, { secret: true, docDefault: opts.docDefault });
}

const trimSlash = (value: string) => value.replace(/\/+$/, '');

export type ConfigOf<S extends Record<string, Setting<unknown>>> = { readonly [K in keyof S]: S[K] extends Setting<infer T> ? T : never };

/** What a value must be, in words, from its schema: the error messages' second half. */
export function expected(s: Setting<unknown>): string {
  const schema = s.schema as Record<string, any>;
  if (s.secret) return `a comma-separated list of secrets of at least ${schema.items.minLength} characters; ${schema.hint}`;
  if (schema.type === 'array') return `a comma-separated list of integers from ${schema.items.minimum} to ${schema.items.maximum}`;
  if (schema.type === 'integer') return `an integer from ${schema.minimum} to ${schema.maximum}`;
  if (schema.enum) return schema.enum.length === 2 && schema.enum[0] === 'true' ? '"true" or "false"' : `one of ${schema.enum.map((v: string) => `"${v}"`).join(', ')}`;
  if (schema.format === 'url') return `a URL (${String(schema.pattern).slice(2, -4).split('|').join(', ')})`;
  return 'a non-empty string';
}

// env-schema's own Ajv options, made once (a fresh instance per load costs ~100 ms of compiling),
// plus the keyword and format our schemas use.
const ajv = new Ajv({ allErrors: true, removeAdditional: true, useDefaults: true, coerceTypes: true, allowUnionTypes: true, addUsedSchema: false });
ajv.addKeyword('hint');
ajv.addFormat('url', (value: string) => URL.canParse(value));

/** One schema object per spec, so Ajv compiles each spec once. */
const schemas = new WeakMap<object, TSchema>();

function schemaOf(spec: Record<string, Setting<unknown>>): TSchema {
  let schema = schemas.get(spec);
  if (!schema) {
    const properties = Object.values(spec).map((s) => [s.name, s.optional || 'default' in s.schema ? Type.Optional(s.schema) : s.schema]);
    schema = Type.Object(Object.fromEntries(properties));
    schemas.set(spec, schema);
  }
  return schema;
}

/**
 * The value env-schema sees: trimmed, empty counted as unset (so its default applies), lists split
 * at commas so that Ajv coerces and checks every item.
 */
function prepare(settings: Array<Setting<unknown>>, env: Env): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const s of settings) {
    const raw = env[s.name]?.trim();
    if (raw === undefined || raw === '') continue;
    data[s.name] = (s.schema as { type?: string }).type === 'array' ? raw.split(',').map((item) => item.trim()) : raw;
  }
  return data;
}

/** Reads every setting of a spec, collecting all problems so one boot attempt names them all. */
export function parseEnv<S extends Record<string, Setting<unknown>>>(spec: S, env: Env = process.env): ConfigOf<S> {
  const settings = Object.values(spec);
  let values: Record<string, unknown>;
  try {
    values = envSchema({ schema: schemaOf(spec), data: prepare(settings, env), env: false, dotenv: false, ajv });
  } catch (err) {
    const failed = (err as { errors?: Array<{ instancePath: string; keyword: string; params: { missingProperty?: string } }> }).errors;
    if (!failed) throw err;
    throw new ConfigError(problems(settings, failed, env));
  }
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(spec)) {
    const value = values[s.name];
    out[key] = value !== undefined && s.finish ? s.finish(value as never) : value;
  }
  return out as ConfigOf<S>;
}

function problems(settings: Array<Setting<unknown>>, errors: Array<{ instancePath: string; params: { missingProperty?: string } }>, env: Env): string[] {
  const names = new Set(errors.map((e) => e.params.missingProperty ?? e.instancePath.split('/')[1]!));
  return settings
    .filter((s) => names.has(s.name))
    .map((s) => {
      const raw = env[s.name]?.trim();
      if (!raw) return `${s.name} is required (${expected(s)})`;
      // A secret's value is never echoed.
      return s.secret ? `${s.name} must be ${expected(s)}` : `${s.name} must be ${expected(s)} (got ${JSON.stringify(raw)})`;
    });
}

