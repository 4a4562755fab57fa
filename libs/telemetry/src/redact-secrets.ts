// Header and field names whose values are credentials. Compared lower-cased: Node and Fastify
// lower-case incoming header names (`serviceapitoken`), but code may log its own objects with
// the contract's spelling (`serviceApiToken`) or any other.
const SECRET_NAMES = new Set(['serviceapitoken', 'servicetoken', 'x-admin-token', 'authorization']);

export const REDACTED = '[Redacted]';

const isSecret = (key: string | number | undefined): boolean => SECRET_NAMES.has(String(key).toLowerCase());

/**
 * pino `redact` options for header objects. pino's paths are case-sensitive, so every key of a
 * header object (`req.headers.*`, `headers.*`, …) is matched and the censor decides by the
 * lower-cased name; other values pass through untouched.
 */
export const redactSecretHeaders = {
  paths: ['headers.*', '*.headers.*'],
  censor: (value: unknown, path: string[]): unknown => (isSecret(path[path.length - 1]) ? REDACTED : value),
};

/**
 * pino `formatters.log`: the same rule for secrets logged as top-level fields
 * (`log.info({ serviceApiToken })`), which pino's redact cannot match by wildcard.
 */
export function redactSecretFields(object: Record<string, unknown>): Record<string, unknown> {
  if (!Object.keys(object).some(isSecret)) return object;
  const copy = { ...object };
  for (const key of Object.keys(copy)) if (isSecret(key)) copy[key] = REDACTED;
  return copy;
}
