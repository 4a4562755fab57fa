import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { CONTRACT_FORMATS, CreateDepositBody, CreateWithdrawBody, isContractDateTime, UpdateCallbackUrlBody, ViewTransactionQuery } from '../src';

// As @dw/http-kit builds its validators: ajv-formats, then the contract's stricter formats.
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
for (const [name, check] of Object.entries(CONTRACT_FORMATS)) ajv.addFormat(name, check);

describe('printable and well-formed text (docs/api.md#transactions: any character except U+0000–U+001F and U+007F)', () => {
  const deposit = ajv.compile(CreateDepositBody);
  const withdraw = ajv.compile(CreateWithdrawBody);
  const url = ajv.compile(UpdateCallbackUrlBody);
  const base = { amount: '1', currency: 'USD', orderId: 'o' };
  const refused = ['\u0000', 'a\u0001', '\u001f', '\u007f', 'line\nbreak', '\t', '\udfff', '\ud800x', 'x\ud83d'];
  const accepted = ['plain', '😀', '\u202eevil', '\u0085\u009f', '中文', '\ufeff', '\uffff', 'e\u0301'];

  it.each(refused)('refuses %j in orderId, description, metadata keys and values, destination and url', (bad) => {
    expect(deposit({ ...base, orderId: bad })).toBe(false);
    expect(deposit({ ...base, description: bad })).toBe(false);
    expect(deposit({ ...base, metadata: { [bad]: 'v' } })).toBe(false);
    expect(deposit({ ...base, metadata: { k: bad } })).toBe(false);
    expect(withdraw({ ...base, destination: bad })).toBe(false);
    expect(url({ url: `https://example.com/${bad}` })).toBe(false);
  });

  it.each(accepted)('accepts %j everywhere', (good) => {
    expect(deposit({ ...base, orderId: good, description: good, metadata: { [good]: good } })).toBe(true);
    expect(withdraw({ ...base, destination: good })).toBe(true);
  });

  it.each(['\u2028', 'a\u2029b', '\u0085'])('checks the value of a metadata key holding %j (a printable line separator)', (key) => {
    expect(deposit({ ...base, metadata: { [key]: 'ok' } })).toBe(true);
    expect(deposit({ ...base, metadata: { [key]: 'nul\u0000' } })).toBe(false);
    expect(deposit({ ...base, metadata: { [key]: 42 } })).toBe(false);
    expect(deposit({ ...base, metadata: { [key]: 'x'.repeat(501) } })).toBe(false);
  });

  it('keeps empty descriptions and metadata values allowed, and empty orderIds and keys refused', () => {
    expect(deposit({ ...base, description: '', metadata: { k: '' } })).toBe(true);
    expect(deposit({ ...base, orderId: '' })).toBe(false);
    expect(deposit({ ...base, metadata: { '': 'v' } })).toBe(false);
  });
});

describe('uuid: only the canonical 8-4-4-4-12 form PostgreSQL stores', () => {
  const q = ajv.compile(ViewTransactionQuery);
  it.each(['7b0c0000-0000-4000-8000-000000000000', '7B0C0000-0000-4000-8000-00000000000A'])('accepts %s', (id) => expect(q({ id })).toBe(true));
  it.each(['urn:uuid:7b0c0000-0000-4000-8000-000000000000', '{7b0c0000-0000-4000-8000-000000000000}', '7b0c0000000040008000000000000000', ''])(
    'refuses %s',
    (id) => expect(q({ id })).toBe(false),
  );
});

describe('date-time: validated by round trip, years 0001–9999, offsets PostgreSQL reads', () => {
  it.each(['2026-11-21T10:00:00Z', '2026-11-21T10:00:00.123456789Z', '2024-02-29T00:00:00Z', '0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '2026-01-01T00:00:00+15:59', '2026-01-01t00:00:00z'])(
    'accepts %s',
    (value) => expect(isContractDateTime(value)).toBe(true),
  );
  it.each([
    '2026-02-31T00:00:00Z', '2026-02-29T00:00:00Z', '2026-13-01T00:00:00Z', '2026-01-01T24:00:00Z', '2026-12-31T23:59:60Z',
    '0000-01-01T00:00:00Z', '0001-01-01T00:00:00+00:01', '9999-12-31T23:59:59-00:01', '10000-01-01T00:00:00Z',
    '2026-01-01T00:00:00+16:00', '2026-01-01T00:00:00', '2026-01-01', '2026-01-01 00:00:00Z', 'now', '',
  ])('refuses %s', (value) => expect(isContractDateTime(value)).toBe(false));
});

describe('cursor: only the base64url text the API issues', () => {
  const q = ajv.compile(ViewTransactionQuery);
  it('refuses percent signs and other characters outside base64url', () => {
    expect(q({ cursor: 'WyIyMDI2In0' })).toBe(true);
    for (const cursor of ['%%%garbage', '%E0%A4%A', 'a b', 'a+b/c=']) expect(q({ cursor })).toBe(false);
  });
});
