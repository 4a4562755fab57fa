import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { AMOUNT_PATTERN, CreateDepositBody, CreateWithdrawBody, ViewTransactionQuery } from '../src';

const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));

describe('amount (CONTRACT 4.1)', () => {
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
