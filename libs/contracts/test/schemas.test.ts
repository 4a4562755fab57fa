import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import {
  AMOUNT_PATTERN,
  CreateDepositBody,
  CreateWithdrawBody,
  RecoverCallbacksBody,
  RedeliverCallbackBody,
  RotateCallbackSecretBody,
  StatusChangeBody,
  TransactionIdParams,
  UpdateCallbackUrlBody,
  ViewTransactionQuery,
} from '../src';

const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));

describe('amount (docs/api.md#transactions)', () => {
  const re = new RegExp(AMOUNT_PATTERN, 'u');
  it.each(['1', '100.50', '0.00000001', '999999999999999999.99999999', '0.1', '007'])('accepts %s', (a) => {
    expect(re.test(a)).toBe(true);
  });
  it.each(['0', '0.0', '-1', '+1', '1e5', '1.', '.5', '1234567890123456789', '1.123456789', ' 1', '1 ', '1,5', 'NaN', ''])(
    'refuses %s',
    (a) => expect(re.test(a)).toBe(false),
  );
});

describe('create bodies', () => {
  const deposit = ajv.compile(CreateDepositBody);
  const withdraw = ajv.compile(CreateWithdrawBody);
  it('accept the contract example and refuse unknown fields', () => {
    expect(deposit({ amount: '100.50', currency: 'USD', orderId: 'order-42' })).toBe(true);
    expect(deposit({ amount: '100.50', currency: 'USD', orderId: 'order-42', x: 1 })).toBe(false);
    expect(withdraw({ amount: '1', currency: 'USDT', orderId: 'o', destination: 'wallet' })).toBe(true);
    expect(withdraw({ amount: '1', currency: 'USDT', orderId: 'o' })).toBe(false);
  });
});

describe('viewTransaction query', () => {
  const q = ajv.compile(ViewTransactionQuery);
  it('bounds limit to 1–100', () => {
    expect(q({ limit: 1 })).toBe(true);
    expect(q({ limit: 100 })).toBe(true);
    expect(q({ limit: 0 })).toBe(false);
    expect(q({ limit: 101 })).toBe(false);
  });
});

describe('callbackBody', () => {
  it('serializes an event with the contract’s key order, whatever order it was stored in', () => {
    const { callbackBody } = require('../src') as typeof import('../src');
    const stored = JSON.parse(
      '{"id":"evt_1","data":{"updatedAt":"u","id":"t","type":"deposit","status":"pending","amount":"1.50","currency":"USD","orderId":"o","metadata":{},"createdAt":"c","description":null,"destination":null},"type":"deposit.pending","sequence":1,"createdAt":"c"}',
    );
    expect(callbackBody(stored)).toBe(
      '{"id":"evt_1","type":"deposit.pending","createdAt":"c","sequence":1,"data":{"id":"t","type":"deposit","status":"pending","amount":"1.50","currency":"USD","orderId":"o","description":null,"metadata":{},"destination":null,"createdAt":"c","updatedAt":"u"}}',
    );
  });
});

describe('request schemas', () => {
  const REQUESTS = {
    CreateDepositBody,
    CreateWithdrawBody,
    UpdateCallbackUrlBody,
    RotateCallbackSecretBody,
    RedeliverCallbackBody,
    RecoverCallbacksBody,
    ViewTransactionQuery,
    StatusChangeBody,
    TransactionIdParams,
  };

  /** Every `pattern` in a schema, with the path to it and its description. */
  function patterns(node: unknown, at: string): { at: string; description?: unknown }[] {
    if (node === null || typeof node !== 'object') return [];
    const here = typeof (node as { pattern?: unknown }).pattern === 'string' ? [{ at, description: (node as { description?: unknown }).description }] : [];
    return [...here, ...Object.entries(node).flatMap(([key, child]) => patterns(child, `${at}/${key}`))];
  }

  // A pattern's description is its validation message ("must be 3–10 characters A–Z and 0–9"):
  // without one the merchant would be shown the regular expression.
  it.each(Object.entries(REQUESTS))('%s describes every pattern, since the description is the message', (_name, schema) => {
    const undescribed = patterns(schema, '').filter((p) => typeof p.description !== 'string' || p.description === '');
    expect(undescribed).toEqual([]);
  });
});
