/**
 * Environment parsing with defaults and messages that name the setting. Every service reads its
 * whole configuration once at boot; a wrong or missing value stops the process before it listens.
 */
export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export type Env = Record<string, string | undefined>;

/** A setting: reads one variable, returns its value or throws a message naming the variable. */
export interface Setting<T> {
  readonly name: string;
  read(env: Env): T;
}

class SettingError extends Error {}

function setting<T>(name: string, parse: (raw: string | undefined) => T): Setting<T> {
  return {
    name,
    read(env) {
      const raw = env[name];
      return parse(raw === undefined || raw.trim() === '' ? undefined : raw.trim());
    },
  };
}

function fail(name: string, expected: string, raw: string | undefined): never {
  throw new SettingError(
    raw === undefined ? `${name} is required (${expected})` : `${name} must be ${expected} (got ${JSON.stringify(raw)})`,
  );
}

export function int(name: string, opts: { default?: number; min?: number; max?: number } = {}): Setting<number> {
  const min = opts.min ?? 0;
  const max = opts.max ?? Number.MAX_SAFE_INTEGER;
  const expected = `an integer from ${min} to ${max}`;
  return setting(name, (raw) => {
    if (raw === undefined) return opts.default ?? fail(name, expected, raw);
    const n = /^-?\d+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) fail(name, expected, raw);
    return n;
  });
}

export function port(name: string, def: number): Setting<number> {
  return int(name, { default: def, min: 0, max: 65535 });
}

export function str(name: string, opts: { default?: string } = {}): Setting<string> {
  return setting(name, (raw) => raw ?? opts.default ?? fail(name, 'a non-empty string', raw));
}

export function optionalStr(name: string): Setting<string | undefined> {
  return setting(name, (raw) => raw);
}

export function bool(name: string, def: boolean): Setting<boolean> {
  return setting(name, (raw) => {
    if (raw === undefined) return def;
    if (raw === 'true') return true;
    if (raw === 'false') return false;
    return fail(name, '"true" or "false"', raw);
  });
}

export function url(name: string, opts: { default?: string; protocols: string[] }): Setting<string> {
  const expected = `a URL (${opts.protocols.join(', ')})`;
  return setting(name, (raw) => {
    const value = raw ?? opts.default ?? fail(name, expected, raw);
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      return fail(name, expected, raw);
    }
    if (!opts.protocols.includes(parsed.protocol.replace(/:$/, ''))) fail(name, expected, raw);
    return value.replace(/\/+$/, '');
  });
}

/** A URL that may be left unset (the feature it enables is then off). */
export function optionalUrl(name: string, protocols: string[]): Setting<string | undefined> {
  const inner = url(name, { protocols });
  return setting(name, (raw) => (raw === undefined ? undefined : inner.read({ [name]: raw })));
}

export function intList(
  name: string,
  opts: { default: number[]; min?: number; max?: number; minLength?: number },
): Setting<number[]> {
  const min = opts.min ?? 0;
  const max = opts.max ?? Number.MAX_SAFE_INTEGER;
  const expected = `a comma-separated list of integers from ${min} to ${max}`;
  return setting(name, (raw) => {
    if (raw === undefined) return opts.default;
    const items = raw.split(',').map((s) => s.trim());
    const values = items.map((s) => (/^\d+$/.test(s) ? Number(s) : NaN));
    if (values.length < (opts.minLength ?? 1) || values.some((v) => !Number.isSafeInteger(v) || v < min || v > max)) {
      fail(name, expected, raw);
    }
    return values;
  });
}

export function oneOf<T extends string>(name: string, values: readonly T[], def: T): Setting<T> {
  return setting(name, (raw) => {
    if (raw === undefined) return def;
    if ((values as readonly string[]).includes(raw)) return raw as T;
    return fail(name, `one of ${values.map((v) => `"${v}"`).join(', ')}`, raw);
  });
}

/** A comma-separated list of secrets, each at least `minLength` characters; required. */
export function secretList(name: string, opts: { minLength: number; hint: string }): Setting<string[]> {
  const expected = `a comma-separated list of secrets of at least ${opts.minLength} characters; ${opts.hint}`;
  return {
    name,
    read(env) {
      const raw = env[name];
      const items = (raw ?? '').split(',').map((s) => s.trim());
      if (raw === undefined || raw.trim() === '') throw new SettingError(`${name} is required (${expected})`);
      // The value itself is never echoed: it is a secret.
      if (items.some((s) => s.length < opts.minLength)) throw new SettingError(`${name} must be ${expected}`);
      return items;
    },
  };
}

export type ConfigOf<S extends Record<string, Setting<unknown>>> = { readonly [K in keyof S]: ReturnType<S[K]['read']> };

/** Reads every setting of a spec, collecting all problems so one boot attempt names them all. */
export function parseEnv<S extends Record<string, Setting<unknown>>>(spec: S, env: Env = process.env): ConfigOf<S> {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, s] of Object.entries(spec)) {
    try {
      out[key] = s.read(env);
    } catch (err) {
      if (!(err instanceof SettingError)) throw err;
      problems.push(err.message);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out as ConfigOf<S>;
}
