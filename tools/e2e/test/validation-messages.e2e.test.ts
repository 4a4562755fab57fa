/**
 * STYLE: "4xx bodies say exactly what to fix". For every endpoint that takes input, a sweep of bad
 * values (one for each rule of each field, generated from the schemas /openapi.json publishes,
 * and from @dw/contracts for the operator API, which the gateway does not route) through the real
 * processes: every answer is a 400 validation_failed naming the field, and neither a message nor
 * the detail is Ajv's generic wording, which names a keyword instead of what the field accepts.
 */
import { StatusChangeBody, TransactionIdParams } from '@dw/contracts';
import { ADMIN_TOKEN, api, startStack, type Merchant, type Stack } from './support/stack';

type Json = Record<string, any>;

let stack: Stack;
let m: Merchant;
let doc: Json;
beforeAll(async () => {
  stack = await startStack('messages', { RATE_LIMIT_PER_SECOND: '10000' });
  m = stack.createMerchant('Messages merchant');
  doc = (await (await fetch(`${stack.gateway}/openapi.json`)).json()) as Json;
});
afterAll(async () => stack?.close());

/** Ajv's own words: they name a keyword, not what the field accepts. */
const GENERIC = [
  /must be equal to constant/,
  /must be equal to one of the allowed values/,
  /must match a schema in anyOf/,
  /must match exactly one schema in oneOf/,
  /is not valid/,
  /must match pattern "\^/,
  /must NOT have/,
  /must be [<>]=? ?\d/,
  /must have required property/,
  /must NOT have additional properties/,
  /has an invalid format/,
];

/** Follows a local $ref (`#/components/schemas/X`). */
function deref(schema: Json): Json {
  if (typeof schema?.$ref !== 'string') return schema;
  return (schema.$ref as string)
    .slice(2)
    .split('/')
    .reduce((node: any, token) => node?.[token.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
}

interface Bad {
  /** What rule the value breaks, for the test's name. */
  rule: string;
  value: unknown;
  /** Values the message must list (a union of literals, an enum). */
  lists?: unknown[];
  /** Where inside the field the error is (a key of an object), when not the field itself. */
  at?: string;
}

/** The values of an enum, a const, or a union of those (as TypeBox writes "deposit" | "withdraw"). */
function literalsOf(s: Json): unknown[] | undefined {
  if (Array.isArray(s.enum)) return s.enum;
  if ('const' in s) return [s.const];
  const branches = Array.isArray(s.anyOf) ? (s.anyOf as Json[]).map((b) => literalsOf(deref(b))) : [];
  return branches.length > 0 && branches.every(Boolean) ? branches.flat() : undefined;
}

/** One value breaking each rule of a field's schema; `asText` for query and path parameters. */
function badValues(raw: Json, asText: boolean): Bad[] {
  const s = deref(raw);
  const bad: Bad[] = [];
  const literals = literalsOf(s);
  if (literals) return [{ rule: 'a value outside the union', value: 'bogus', lists: literals }, ...(asText ? [] : [{ rule: 'a number', value: 7, lists: literals }])];
  if (Array.isArray(s.anyOf)) {
    if (!asText) bad.push({ rule: 'no branch of the union', value: { x: 1 } });
    for (const branch of s.anyOf) bad.push(...badValues(branch, asText).filter((b) => b.rule !== 'another type'));
    return bad;
  }
  const types: string[] = Array.isArray(s.type) ? s.type : [s.type];
  if (types.includes('string')) {
    if (!asText) bad.push({ rule: 'another type', value: 12345 });
    if (typeof s.pattern === 'string') bad.push({ rule: `pattern ${s.pattern}`, value: 'a\u0007' });
    if (typeof s.format === 'string') bad.push({ rule: `format ${s.format}`, value: 'bogus' });
    if (typeof s.minLength === 'number' && s.minLength > 0) bad.push({ rule: 'minLength', value: '' });
    if (typeof s.maxLength === 'number') bad.push({ rule: 'maxLength', value: 'x'.repeat(s.maxLength + 1) });
  }
  if (types.includes('integer') || types.includes('number')) {
    bad.push({ rule: 'another type', value: 'abc' });
    if (types.includes('integer')) bad.push({ rule: 'a fraction', value: asText ? '1.5' : 1.5 });
    if (typeof s.minimum === 'number') bad.push({ rule: 'minimum', value: asText ? String(s.minimum - 1) : s.minimum - 1 });
    if (typeof s.maximum === 'number') bad.push({ rule: 'maximum', value: asText ? String(s.maximum + 1) : s.maximum + 1 });
  }
  if (types.includes('object') && !asText) {
    bad.push({ rule: 'another type', value: 'text' });
    if (typeof s.maxProperties === 'number') bad.push({ rule: 'maxProperties', value: Object.fromEntries(Array.from({ length: s.maxProperties + 1 }, (_, i) => [`k${i}`, 'v'])) });
    if (s.propertyNames) {
      bad.push({ rule: 'a key too long', value: { ['k'.repeat(200)]: 'v' }, at: `/${'k'.repeat(200)}` });
      bad.push({ rule: 'a key with a control character', value: { 'k\u0007': 'v' }, at: '/k\u0007' });
    }
    if (s.patternProperties || typeof s.additionalProperties === 'object') bad.push({ rule: 'a value of another type', value: { k: 1 }, at: '/k' });
  }
  return bad;
}

interface Case {
  endpoint: string;
  rule: string;
  send: () => Promise<{ status: number; json: any }>;
  /** The path errors must name. */
  path: string;
  lists?: unknown[];
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** Every operation of /openapi.json that takes a JSON body or query parameters, with its bad inputs. */
function gatewayCases(): Case[] {
  const cases: Case[] = [];
  for (const [url, item] of Object.entries(doc.paths as Json)) {
    for (const method of METHODS.filter((x) => (item as Json)[x])) {
      const op = (item as Json)[method] as Json;
      const endpoint = `${method.toUpperCase()} ${url}`;
      const call = (path: string, body?: unknown) => () => api(stack, m.apiToken)(method.toUpperCase(), path, body, { accept: 'application/json' });
      const bodySchema = op.requestBody?.content?.['application/json']?.schema;
      if (bodySchema) {
        const s = deref(bodySchema);
        for (const [name, field] of Object.entries((s.properties ?? {}) as Json)) {
          for (const bad of badValues(field, false)) {
            cases.push({ endpoint, rule: `${name}: ${bad.rule}`, send: call(url, { [name]: bad.value }), path: `/${name}${bad.at ?? ''}`, lists: bad.lists });
          }
        }
        for (const name of (s.required ?? []) as string[]) cases.push({ endpoint, rule: `${name} missing`, send: call(url, {}), path: `/${name}` });
        cases.push({ endpoint, rule: 'an unknown field', send: call(url, { zzUnknown: 1 }), path: '/zzUnknown' });
        cases.push({ endpoint, rule: 'an array for the body', send: call(url, [1]), path: '' });
      }
      for (const param of ((op.parameters ?? []) as Json[]).map(deref).filter((p) => p.in === 'query')) {
        for (const bad of badValues(param.schema, true)) {
          const query = `${param.name}=${encodeURIComponent(String(bad.value))}`;
          cases.push({ endpoint, rule: `${param.name}: ${bad.rule}`, send: call(`${url}?${query}`), path: `querystring:/${param.name}`, lists: bad.lists });
        }
      }
      // Every read, whether it takes a query or not (routes/declared-query.ts in the gateway); a
      // write's body is checked before its query, so input-validation's cases send it valid.
      if (!bodySchema) cases.push({ endpoint, rule: 'an unknown parameter', send: call(`${url}?zzUnknown=1`), path: 'querystring:/zzUnknown' });
    }
  }
  return cases;
}

const VALID_ID = '7b0c0000-0000-4000-8000-000000000000';

/** The operator API of transactions-svc (docs/api.md#statuses-and-the-operator-api), straight to the service: not routed by the gateway. */
function operatorCases(): Case[] {
  const endpoint = 'POST /internal/transactions/{id}/status';
  const move = (id: string, body: unknown) => async () => {
    const res = await fetch(`${stack.transactions}/internal/transactions/${id}/status`, {
      method: 'POST',
      headers: { 'x-admin-token': ADMIN_TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: await res.json() };
  };
  const cases: Case[] = [];
  for (const [name, field] of Object.entries(StatusChangeBody.properties as Json)) {
    for (const bad of badValues(field, false)) cases.push({ endpoint, rule: `${name}: ${bad.rule}`, send: move(VALID_ID, { status: 'completed', [name]: bad.value }), path: `/${name}${bad.at ?? ''}`, lists: bad.lists });
  }
  cases.push({ endpoint, rule: 'status missing', send: move(VALID_ID, {}), path: '/status' });
  cases.push({ endpoint, rule: 'an unknown field', send: move(VALID_ID, { status: 'completed', zzUnknown: 1 }), path: '/zzUnknown' });
  for (const bad of badValues(TransactionIdParams.properties.id, true)) {
    cases.push({ endpoint, rule: `id: ${bad.rule}`, send: move(encodeURIComponent(String(bad.value)), { status: 'completed' }), path: 'params:/id' });
  }
  cases.push({ endpoint, rule: 'id: no dashes', send: move(VALID_ID.replace(/-/g, ''), { status: 'completed' }), path: 'params:/id' });
  return cases;
}

describe('every validation_failed says what the field accepts', () => {
  it('sweeps every endpoint that takes input: each answer names the field, in words that are not Ajv’s', async () => {
    const cases = [...gatewayCases(), ...operatorCases()];
    // The sweep reaches every merchant endpoint with input and the operator API, so a new one is swept too.
    expect([...new Set(cases.map((c) => c.endpoint))].sort()).toEqual([
      'GET /api/getBalance',
      'GET /api/getBalanceHistory',
      'GET /api/getCallbackUrls',
      'GET /ui/balances',
      'GET /ui/endpointHealth',
      'GET /ui/statement',
      'GET /ui/viewTransaction',
      'POST /api/createDeposit',
      'POST /api/createWithdraw',
      'POST /api/recoverCallbacks',
      'POST /api/redeliverCallback',
      'POST /api/rotateCallbackSecret',
      'POST /internal/transactions/{id}/status',
      'PUT /api/updateCallbackUrlDeposit',
      'PUT /api/updateCallbackUrlWithdraw',
    ]);
    expect(cases.length).toBeGreaterThan(80);

    const failures: string[] = [];
    for (const c of cases) {
      const res = await c.send();
      const where = `${c.endpoint} (${c.rule}) -> ${res.status} ${JSON.stringify(res.json)}`;
      if (res.status !== 400 || res.json?.code !== 'validation_failed' || !Array.isArray(res.json.errors)) {
        failures.push(`not a 400 validation_failed: ${where}`);
        continue;
      }
      const named = (res.json.errors as { path: string; message: string }[]).find((e) => e.path === c.path);
      if (!named) failures.push(`no error names ${c.path}: ${where}`);
      for (const text of [res.json.detail as string, ...res.json.errors.map((e: { message: string }) => e.message)]) {
        const generic = GENERIC.find((re) => re.test(text));
        if (generic) failures.push(`generic wording ${generic} in ${JSON.stringify(text)}: ${where}`);
      }
      for (const value of c.lists ?? []) {
        if (named && !named.message.includes(String(value))) failures.push(`the message does not list ${String(value)}: ${where}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);
});

describe('the messages the audit quoted', () => {
  it('POST /api/recoverCallbacks with "type":"bogus" lists the allowed types', async () => {
    const res = await api(stack, m.apiToken)('POST', '/api/recoverCallbacks', { since: new Date().toISOString(), type: 'bogus' });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({
      code: 'validation_failed',
      detail: 'Fix the body field type: must be one of: deposit, withdraw.',
      errors: [{ path: '/type', message: 'must be one of: deposit, withdraw' }],
    });
  });

  it('GET /ui/viewTransaction?status=bogus lists the statuses', async () => {
    const res = await api(stack, m.apiToken)('GET', '/ui/viewTransaction?status=bogus', undefined, { accept: 'application/json' });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({
      code: 'validation_failed',
      detail: 'Fix the query parameter status: must be one of: pending, processing, completed, failed.',
      errors: [{ path: 'querystring:/status', message: 'must be one of: pending, processing, completed, failed' }],
    });
  });

  it('POST /internal/transactions/{id}/status with a bad id names the path parameter and the rule', async () => {
    const res = await fetch(`${stack.transactions}/internal/transactions/nope/status`, {
      method: 'POST',
      headers: { 'x-admin-token': ADMIN_TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'completed' }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      code: 'validation_failed',
      detail: 'Fix the path parameter id: must be a UUID (8-4-4-4-12 hex digits).',
      errors: [{ path: 'params:/id', message: 'must be a UUID (8-4-4-4-12 hex digits)' }],
    });
  });
});
