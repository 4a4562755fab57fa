/**
 * STYLE: "4xx bodies say exactly what to fix". Every validation_failed built from a schema names
 * the field (errors[].path, a JSON Pointer) and what it accepts, in words built from the schema
 * (the values of a union of literals, a pattern's description, a range), never Ajv's own wording
 * ("must be equal to constant", "must match pattern \"^…\""), and the detail says the same.
 */
import {
  CreateDepositBody,
  CreateWithdrawBody,
  RecoverCallbacksBody,
  RotateCallbackSecretBody,
  StatusChangeBody,
  TransactionIdParams,
  UpdateCallbackUrlBody,
  ViewTransactionQuery,
} from '@dw/contracts';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { createService, validationDetail, validationFailed } from '../src';

let app: FastifyInstance;
beforeAll(async () => {
  app = createService({ logger: pino({ level: 'silent' }), readiness: {} });
  const ok = async () => ({ ok: true });
  app.post('/deposit', { schema: { body: CreateDepositBody } }, ok);
  app.post('/withdraw', { schema: { body: CreateWithdrawBody } }, ok);
  app.post('/recover', { schema: { body: RecoverCallbacksBody } }, ok);
  app.post('/rotate', { schema: { body: RotateCallbackSecretBody } }, ok);
  app.put('/url', { schema: { body: UpdateCallbackUrlBody } }, ok);
  app.get('/view', { schema: { querystring: ViewTransactionQuery } }, ok);
  app.post('/transactions/:id/status', { schema: { params: TransactionIdParams, body: StatusChangeBody } }, ok);
  app.post(
    '/raw',
    {
      schema: {
        body: Type.Object(
          {
            colour: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: ['red', 'green'] })),
            version: Type.Optional(Type.Literal(2)),
            state: Type.Optional(Type.Union([Type.Literal('on'), Type.Null()])),
            code: Type.Optional(Type.String({ pattern: '^[a-z]+$' })),
            tags: Type.Optional(Type.Array(Type.String(), { minItems: 1, maxItems: 2 })),
            ratio: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
          },
          { additionalProperties: false },
        ),
      },
    },
    ok,
  );
  await app.ready();
});
afterAll(async () => app?.close());

async function problem(method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) {
  const res = await app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
  expect(res.statusCode).toBe(400);
  const body = res.json();
  expect(body.code).toBe('validation_failed');
  return body as { detail: string; errors: { path: string; message: string }[] };
}

const since = new Date().toISOString();

describe('the three messages the audit quoted', () => {
  it('POST /api/recoverCallbacks with "type":"bogus" lists the types', async () => {
    const body = await problem('POST', '/recover', { since, type: 'bogus' });
    expect(body.errors).toEqual([{ path: '/type', message: 'must be one of: deposit, withdraw' }]);
    expect(body.detail).toBe('Fix the body field type: must be one of: deposit, withdraw.');
  });

  it('/ui/viewTransaction?status=bogus lists the statuses', async () => {
    const body = await problem('GET', '/view?status=bogus');
    expect(body.errors).toEqual([{ path: 'querystring:/status', message: 'must be one of: pending, processing, completed, failed' }]);
    expect(body.detail).toBe('Fix the query parameter status: must be one of: pending, processing, completed, failed.');
  });

  it('the operator API with a bad path id names the parameter and the rule', async () => {
    const body = await problem('POST', '/transactions/nope/status', { status: 'completed' });
    expect(body.errors).toEqual([{ path: 'params:/id', message: 'must be a UUID (8-4-4-4-12 hex digits)' }]);
    expect(body.detail).toBe('Fix the path parameter id: must be a UUID (8-4-4-4-12 hex digits).');
  });
});

describe('each keyword says what is accepted', () => {
  it.each([
    ['a union of literals, whatever the wrong value’s type', '/transactions/7b0c0000-0000-4000-8000-000000000000/status', { status: null }, '/status', 'must be one of: processing, completed, failed'],
    ['enum', '/raw', { colour: 'blue' }, '/colour', 'must be one of: red, green'],
    ['a single const', '/raw', { version: 3 }, '/version', 'must be 2'],
    ['a literal or null', '/raw', { state: 'off' }, '/state', 'must be one of: on, null'],
    ['a pattern with a description', '/deposit', { amount: '1', currency: 'usd', orderId: 'o' }, '/currency', 'must be 3–10 characters A–Z and 0–9'],
    ['the amount rule, as a sentence', '/deposit', { amount: '1.', currency: 'USD', orderId: 'o' }, '/amount', 'must be a decimal string > 0, up to 18 integer and 8 fraction digits, e.g. "100.50"; never a JSON number'],
    ['a pattern without a description', '/raw', { code: 'A' }, '/code', 'must match the regular expression ^[a-z]+$'],
    ['format date-time', '/recover', { since: 'yesterday' }, '/since', 'must be an RFC 3339 date-time with a time zone, e.g. "2026-11-21T10:00:00Z" (a real date, years 0001–9999)'],
    ['required', '/recover', {}, '/since', 'is required'],
    ['additionalProperties', '/recover', { since, colour: 'red' }, '/colour', 'is not an allowed field (allowed: since, until, type)'],
    ['type', '/deposit', { amount: 1, currency: 'USD', orderId: 'o' }, '/amount', 'must be a string'],
    ['type with two types', '/url', { url: 5 }, '/url', 'must be a string or null'],
    ['minLength of a bounded string', '/deposit', { amount: '1', currency: 'USD', orderId: '' }, '/orderId', 'must be 1–128 characters long'],
    ['maxLength alone', '/deposit', { amount: '1', currency: 'USD', orderId: 'o', description: 'd'.repeat(501) }, '/description', 'must be at most 500 characters long'],
    ['minLength inside a union with null', '/url', { url: '' }, '/url', 'must be 1–2048 characters long'],
    ['minimum', '/rotate', { overlapSeconds: -1 }, '/overlapSeconds', 'must be an integer from 0 to 604800'],
    ['maximum', '/rotate', { overlapSeconds: 604_801 }, '/overlapSeconds', 'must be an integer from 0 to 604800'],
    ['integer type with a range', '/rotate', { overlapSeconds: 1.5 }, '/overlapSeconds', 'must be an integer from 0 to 604800'],
    ['exclusiveMinimum', '/raw', { ratio: 0 }, '/ratio', 'must be a number greater than 0'],
    ['maxItems', '/raw', { tags: ['a', 'b', 'c'] }, '/tags', 'must have 1–2 items'],
    ['maxProperties', '/deposit', { amount: '1', currency: 'USD', orderId: 'o', metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }, '/metadata', 'must have at most 20 keys'],
    ['a metadata key too long', '/deposit', { amount: '1', currency: 'USD', orderId: 'o', metadata: { ['k'.repeat(41)]: 'v' } }, `/metadata/${'k'.repeat(41)}`, 'is not an allowed key: a key must be 1–40 characters long'],
    ['a field whose name holds "/" and "~" (RFC 6901 escapes: ~1, ~0)', '/recover', { since, 'a/b~c': 1 }, '/a~1b~0c', 'is not an allowed field (allowed: since, until, type)'],
    ['a metadata key too long holding "/"', '/deposit', { amount: '1', currency: 'USD', orderId: 'o', metadata: { ['k/'.repeat(21)]: 'v' } }, `/metadata/${'k~1'.repeat(21)}`, 'is not an allowed key: a key must be 1–40 characters long'],
    ['a metadata value too long under a key holding "/"', '/deposit', { amount: '1', currency: 'USD', orderId: 'o', metadata: { 'a/b': 'v'.repeat(501) } }, '/metadata/a~1b', 'must be at most 500 characters long'],
    ['a metadata key with a control character', '/deposit', { amount: '1', currency: 'USD', orderId: 'o', metadata: { 'k\u0000': 'v' } }, '/metadata/k\u0000', 'is not an allowed key: a key must be 1–40 printable characters'],
    ['an operator reason with a control character', '/transactions/7b0c0000-0000-4000-8000-000000000000/status', { status: 'failed', reason: 'a\u0000' }, '/reason', 'must be at most 500 printable characters'],
  ])('%s', async (_name, url, payload, path, message) => {
    const body = await problem(url === '/url' ? 'PUT' : 'POST', url, payload);
    expect(body.errors).toContainEqual({ path, message });
  });

  it.each([
    ['limit=abc', 'querystring:/limit', 'must be an integer from 1 to 100'],
    ['limit=0', 'querystring:/limit', 'must be an integer from 1 to 100'],
    ['cursor=', 'querystring:/cursor', 'must be 1–200 characters long'],
    ['from=2026-02-31T00:00:00Z', 'querystring:/from', 'must be an RFC 3339 date-time with a time zone, e.g. "2026-11-21T10:00:00Z" (a real date, years 0001–9999)'],
    ['colour=red', 'querystring:/colour', 'is not an allowed parameter (allowed: id, type, status, orderId, from, to, limit, cursor)'],
  ])('query %s', async (query, path, message) => {
    const body = await problem('GET', `/view?${query}`);
    expect(body.errors).toContainEqual({ path, message });
  });
});

describe('the detail', () => {
  it('lists every offending field when there are a few', async () => {
    const body = await problem('POST', '/recover', { type: 'bogus', colour: 'red' });
    expect(body.errors).toHaveLength(3);
    expect(body.detail).toMatch(/^Fix 3 body fields\. /);
    for (const e of body.errors) expect(body.detail).toContain(`${e.path.slice(1)}: ${e.message}`);
  });

  it('names the first three and counts the rest when there are more', async () => {
    const body = await problem('POST', '/withdraw', { amount: 1, currency: 1, orderId: 1, description: 1, destination: 1 });
    expect(body.errors).toHaveLength(5);
    expect(body.detail).toMatch(/^Fix 5 body fields\. amount: must be a string; currency: must be a string; orderId: must be a string; and 2 more \(see errors\)\.$/);
  });

  it('speaks of the body itself when the body is the wrong type', async () => {
    const body = await problem('POST', '/recover', [1]);
    // RFC 6901: "" is the whole document; "/" would be a key named "".
    expect(body).toMatchObject({ detail: 'Fix the body: it must be an object.', errors: [{ path: '', message: 'must be an object' }] });
  });

  it('names a field by its key as written: escapes unread, an empty key as ""', async () => {
    expect((await problem('POST', '/recover', { since, 'a/b~c': 1 })).detail).toBe(
      'Fix the body field a/b~c: is not an allowed field (allowed: since, until, type).',
    );
    expect((await problem('POST', '/recover', { since, '': 1 })).errors).toEqual([{ path: '/', message: 'is not an allowed field (allowed: since, until, type)' }]);
    expect((await problem('POST', '/recover', { since, '': 1 })).detail).toBe('Fix the body field "": is not an allowed field (allowed: since, until, type).');
    const emptyMetadataKey = await problem('POST', '/deposit', { amount: '1', currency: 'USD', orderId: 'o', metadata: { '': 'v' } });
    expect(emptyMetadataKey.errors).toEqual([{ path: '/metadata/', message: 'is not an allowed key: a key must be 1–40 characters long' }]);
    expect(emptyMetadataKey.detail).toBe('Fix the body field metadata/"": is not an allowed key: a key must be 1–40 characters long.');
  });

  it('is the default of validationFailed, so handlers that throw one say the same', () => {
    expect(validationFailed([{ path: 'querystring:/cursor', message: 'is not a cursor this API issued' }]).message).toBe(
      'Fix the query parameter cursor: is not a cursor this API issued.',
    );
    expect(validationDetail([{ path: '/since', message: 'must be at most 14 days ago' }])).toBe('Fix the body field since: must be at most 14 days ago.');
  });
});
