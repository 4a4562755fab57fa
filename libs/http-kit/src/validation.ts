/**
 * Request validation with Ajv, never coercing and never removing unknown fields: bodies are
 * validated exactly as sent (`"amount": 100` and `{"extra": 1}` are refused). Querystrings and
 * params arrive as text, so an integer field is converted first, and only from plain decimal digits
 * (`limit=20`): Ajv's own coercion follows JavaScript's Number(), which reads `0x10`, `1e2`, ` 5`
 * and `5.0` as integers.
 */
import { CONTRACT_FORMATS } from '@dw/contracts';
import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from './errors';

function makeAjv(): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    verbose: true,
    strict: false,
    coerceTypes: false,
    removeAdditional: false,
    useDefaults: true,
  });
  addFormats(ajv);
  // The contract's stricter readings of `uuid` and `date-time` (see @dw/contracts text-rules).
  for (const [name, check] of Object.entries(CONTRACT_FORMATS)) ajv.addFormat(name, check);
  return ajv;
}

const ajv = makeAjv();
/** An integer as a query or path parameter: decimal digits, no sign, no leading zero, at most 15 of them (exact in a double). */
const DECIMAL_INTEGER = /^(0|[1-9][0-9]{0,14})$/;

/** The top-level fields of an object schema that are integers. */
function integerFields(schema: { properties?: Record<string, { type?: unknown }> }): string[] {
  return Object.entries(schema.properties ?? {})
    .filter(([, field]) => field.type === 'integer')
    .map(([name]) => name);
}

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const validate = ajv.compile(schema as object);
  const integers = httpPart === 'body' ? [] : integerFields(schema as object);
  if (integers.length === 0) return validate as ReturnType<FastifySchemaCompiler<unknown>>;
  const validateText = (data: Record<string, unknown>) => {
    for (const name of integers) {
      const value = data?.[name];
      if (typeof value === 'string' && DECIMAL_INTEGER.test(value)) data[name] = Number(value);
    }
    const valid = validate(data);
    validateText.errors = validate.errors;
    return valid;
  };
  validateText.errors = null as typeof validate.errors;
  return validateText as unknown as ReturnType<FastifySchemaCompiler<unknown>>;
};

function describe(err: ErrorObject): string {
  const schema = err.parentSchema as { description?: string } | undefined;
  switch (err.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not an allowed field';
    case 'pattern':
      return schema?.description ? `must be ${lowerFirst(schema.description)}` : 'has an invalid format';
    case 'format':
      return `must be a valid ${String(err.params.format)}`;
    case 'type':
      return `must be ${article(String(err.params.type))}`;
    default:
      return err.message ?? 'is invalid';
  }
}

function pathOf(err: ErrorObject): string {
  // An error about an object's key (inside `propertyNames`) names the key itself.
  if (err.propertyName !== undefined) return `${err.instancePath}/${err.propertyName}`;
  if (err.keyword === 'required') return `${err.instancePath}/${String(err.params.missingProperty)}`;
  if (err.keyword === 'additionalProperties') return `${err.instancePath}/${String(err.params.additionalProperty)}`;
  if (err.keyword === 'propertyNames') return `${err.instancePath}/${String(err.params.propertyName)}`;
  return err.instancePath || '/';
}

const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);
const article = (t: string) => (t === 'null' ? 'null' : /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`);

/** Ajv errors → one entry per offending field (a union's alternatives collapse into one message). */
export function fieldErrors(errors: ErrorObject[]): FieldError[] {
  const byPath = new Map<string, ErrorObject[]>();
  for (const err of errors) {
    // `propertyNames` only repeats the errors found inside it, which name the key and the rule.
    if (err.keyword === 'anyOf' || err.keyword === 'oneOf' || err.keyword === 'if' || err.keyword === 'propertyNames') continue;
    const path = pathOf(err);
    byPath.set(path, [...(byPath.get(path) ?? []), err]);
  }
  const result: FieldError[] = [];
  for (const [path, errs] of byPath) {
    const types = errs.filter((e) => e.keyword === 'type').map((e) => String(e.params.type));
    const message =
      types.length > 1 && types.length === errs.length
        ? `must be ${types.map(article).join(' or ')}`
        : describe(errs.find((e) => e.keyword !== 'type') ?? errs[0]!);
    result.push({ path, message });
  }
  return result;
}
