/**
 * Request validation with Ajv, never coercing and never removing unknown fields: bodies are
 * validated exactly as sent (`"amount": 100` and `{"extra": 1}` are refused). Querystrings and
 * params arrive as text, so an integer field is converted first, and only from plain decimal digits
 * (`limit=20`): Ajv's own coercion follows JavaScript's Number(), which reads `0x10`, `1e2`, ` 5`
 * and `5.0` as integers.
 */
import { CONTRACT_FORMATS } from '@dw/contracts';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

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
