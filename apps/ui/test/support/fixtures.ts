/** Fixed data the stand-in transactions-svc answers with; hostile strings test the escaping. */
import type { BalanceHistoryPage, BalanceList, EndpointHealth, ExportRow, TransactionDetail, TransactionPage } from '@dw/contracts';

/** The internal secret shared by the test (playing the gateway), the ui and the stand-in transactions-svc. */
export const INTERNAL_SECRET = 'ui-test-internal-auth-secret-0123456789';
export const MERCHANT_ID = '0b9c6a52-3f5e-4c2a-9d55-0f4f3c1c9e01';
export const OTHER_MERCHANT_ID = '7d1e0f6a-2b3c-4d5e-8f90-a1b2c3d4e5f6';
export const HOSTILE = '<script>alert(1)</script>';
export const HOSTILE_ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt;';

export const DEPOSIT = {
  id: '3f0a8a5e-8c7b-4b1e-9d3a-6f1e2d3c4b5a',
  type: 'deposit',
  status: 'completed',
  // More digits than a double holds: any float parse would change it.
  amount: '123456789012345678.12345678',
  currency: 'USDT',
  orderId: HOSTILE,
  description: 'first "deposit" & more',
  metadata: { note: `<img src=x onerror=alert(2)>`, plain: 'value' },
  destination: null,
  createdAt: '2026-11-21T10:00:00.000Z',
  updatedAt: '2026-11-21T10:00:05.000Z',
} as const;

export const WITHDRAW = {
  id: '5c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e',
  type: 'withdraw',
  status: 'pending',
  amount: '0.10',
  currency: 'USD',
  orderId: 'order-2',
  description: null,
  metadata: {},
  destination: 'IBAN DE00 1234',
  createdAt: '2026-11-21T09:00:00.000Z',
  updatedAt: '2026-11-21T09:00:00.000Z',
} as const;

export const PAGE_ONE: TransactionPage = { items: [DEPOSIT, WITHDRAW], nextCursor: 'cursor-page-2' };
export const PAGE_TWO: TransactionPage = { items: [], nextCursor: null };

export const DETAIL: TransactionDetail = {
  transaction: DEPOSIT,
  ledgerEntries: [],
  events: [
    {
      id: 'evt_01',
      type: 'deposit.pending',
      createdAt: '2026-11-21T10:00:00.000Z',
      delivery: {
        status: 'succeeded',
        attempts: [
          { attempt: 1, at: '2026-11-21T10:00:00.100Z', statusCode: 500, error: null, durationMs: 42, url: 'https://shop.example/cb', trigger: 'automatic' },
          { attempt: 2, at: '2026-11-21T10:00:05.200Z', statusCode: null, error: 'connect ECONNREFUSED', durationMs: 3, url: 'https://shop.example/cb', trigger: 'automatic' },
          { attempt: 3, at: '2026-11-21T10:00:15.300Z', statusCode: 200, error: null, durationMs: 17, url: 'https://shop.example/callbacks/v2', trigger: 'automatic' },
        ],
      },
    },
    {
      id: 'evt_02',
      type: 'deposit.completed',
      createdAt: '2026-11-21T10:00:05.000Z',
      delivery: { status: 'retrying', attempts: [] },
    },
  ],
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
};

/**
 * A deposit whose completed event took 12 attempts: the 6 automatic ones and two manual series of 3
 * (numbered on: docs/callbacks.md#getting-callbacks-again-redelivery-and-recovery).
 */
export const MANY_ATTEMPTS: TransactionDetail = {
  transaction: { ...DEPOSIT, id: '7e2b9c1d-3f4a-4b5c-8d6e-0f1a2b3c4d5e', orderId: 'order-many-attempts' },
  ledgerEntries: [],
  events: [
    {
      id: 'evt_many',
      type: 'deposit.completed',
      createdAt: '2026-11-21T10:00:00.000Z',
      delivery: {
        status: 'succeeded',
        attempts: Array.from({ length: 12 }, (_, i) => ({
          attempt: i + 1,
          at: new Date(Date.parse('2026-11-21T10:00:00.100Z') + i * 60_000).toISOString(),
          statusCode: i === 11 ? 200 : 503,
          error: null,
          durationMs: 10 + i,
          url: 'https://shop.example/cb',
          trigger: i < 6 ? ('automatic' as const) : ('manual' as const),
        })),
      },
    },
  ],
  traceId: null,
};

/** Free text that a spreadsheet would run as a formula, and text that needs RFC 4180 quoting. */
export const FORMULA = '=HYPERLINK("http://evil.test","click")';
export const QUOTED = 'line one, "two"\r\nline three';

export const EXPORT_ROWS: ExportRow[] = [
  {
    transaction: { ...DEPOSIT, orderId: FORMULA, description: QUOTED, metadata: { note: '@SUM(A1)' } },
    lastEventId: 'evt_02',
    lastEventType: 'deposit.completed',
    deliveryStatus: 'succeeded',
    deliveryAttempts: 2,
    acknowledgedAt: '2026-11-21T10:00:07.000Z',
  },
  {
    transaction: { ...WITHDRAW, orderId: '+1 555', description: '-5 refund', destination: '\tTAB' },
    lastEventId: 'evt_03',
    lastEventType: 'withdraw.pending',
    deliveryStatus: 'failed',
    deliveryAttempts: 6,
    acknowledgedAt: null,
  },
  {
    transaction: { ...DEPOSIT, id: '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a', orderId: '\tcmd', description: '\rcmd', metadata: {} },
    lastEventId: null,
    lastEventType: null,
    deliveryStatus: null,
    deliveryAttempts: 0,
    acknowledgedAt: null,
  },
];

export const HEALTH: EndpointHealth = {
  windowHours: 24,
  since: '2026-11-20T10:00:00.000Z',
  endpoints: [
    {
      type: 'deposit',
      url: 'https://merchant.test/cb?a=1&b=<2>',
      deliveries: 10,
      succeeded: 7,
      failed: 1,
      retrying: 2,
      pending: 0,
      skipped: 0,
      successRate: 0.875,
      lastSuccessAt: '2026-11-21T09:59:00.000Z',
      lastFailure: { at: '2026-11-21T09:58:00.000Z', statusCode: null, error: '<b>connect ECONNREFUSED</b>' },
    },
    {
      type: 'withdraw',
      url: null,
      deliveries: 0,
      succeeded: 0,
      failed: 0,
      retrying: 0,
      pending: 0,
      skipped: 0,
      successRate: null,
      lastSuccessAt: null,
      lastFailure: null,
    },
  ],
};

export const BALANCES: BalanceList = {
  balances: [
    { currency: 'BTC', available: '0', held: '0', incoming: '0.00012345', creditLimit: '0' },
    { currency: 'USD', available: '1233567.000', held: '1000.50', incoming: '0', creditLimit: '999999999999999999.99999999' },
  ],
};

/** A statement page, newest first: an operator's correction (hostile reason) and a withdraw's hold. */
export const HISTORY_ONE: BalanceHistoryPage = {
  items: [
    {
      id: 'le_0002',
      createdAt: '2026-11-21T10:00:02.000Z',
      currency: 'USD',
      kind: 'adjustment',
      change: { available: '-0.391', held: '0', incoming: '0' },
      available: '1233567.000',
      held: '1000.50',
      incoming: '0',
      transactionId: null,
      reason: HOSTILE,
      reference: 'adj-1',
    },
    {
      id: 'le_0001',
      createdAt: '2026-11-21T10:00:01.000Z',
      currency: 'USD',
      kind: 'withdraw.hold',
      change: { available: '-1000.50', held: '1000.50', incoming: '0' },
      available: '1233567.391',
      held: '1000.50',
      incoming: '0',
      transactionId: '3f0a8a5e-8c7b-4b1e-9d3a-6f1e2d3c4b5a',
      reason: null,
      reference: null,
    },
  ],
  nextCursor: 'history-page-2',
};
