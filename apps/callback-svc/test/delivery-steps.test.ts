import { ATTEMPT_HEADER } from '@dw/messaging';
import { Webhook } from 'standardwebhooks';
import { parseDeliveryMessage, retryPlan, signCallback, urlForEventType, webhookHeaders } from '../src/delivery';

describe('signCallback (Standard Webhooks)', () => {
  const secret = `whsec_${Buffer.from('a 24-byte signing secret').toString('base64')}`;
  const body = Buffer.from('{"id":"evt_1","type":"deposit.completed","data":{"amount":"1.10","note":"ü"}}');

  it('produces a signature the standardwebhooks library verifies, for the current timestamp', () => {
    const headers = webhookHeaders([secret], 'evt_1', body, new Date());
    expect(new Webhook(secret).verify(body.toString('utf8'), headers)).toMatchObject({ id: 'evt_1' });
  });

  it('matches the library’s own signature byte for byte', () => {
    const at = new Date(1_700_000_000_000);
    expect(signCallback(secret, 'evt_1', 1_700_000_000, body)).toBe(new Webhook(secret).sign('evt_1', at, body.toString('utf8')));
  });

  it('signs once per live secret, space-separated, so a receiver holding either one verifies', () => {
    const previous = `whsec_${Buffer.from('the previous secret, 24b').toString('base64')}`;
    const headers = webhookHeaders([secret, previous], 'evt_1', body, new Date());
    expect(headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
    expect(new Webhook(secret).verify(body.toString('utf8'), headers)).toMatchObject({ id: 'evt_1' });
    expect(new Webhook(previous).verify(body.toString('utf8'), headers)).toMatchObject({ id: 'evt_1' });
    expect(() => new Webhook(`whsec_${Buffer.from('a third secret, 24 bytes').toString('base64')}`).verify(body.toString(), headers)).toThrow();
  });

  it('does not verify under another secret or for another body', () => {
    const headers = webhookHeaders([secret], 'evt_1', body, new Date());
    expect(() => new Webhook(`whsec_${Buffer.from('another secret, 24 bytes').toString('base64')}`).verify(body.toString(), headers)).toThrow();
    expect(() => new Webhook(secret).verify(body.toString().replace('1.10', '9.10'), headers)).toThrow();
  });
});

describe('parseDeliveryMessage', () => {
  const message = (content: string, messageId?: string, headers: Record<string, unknown> = {}) => ({
    content: Buffer.from(content),
    properties: { messageId, headers } as never,
  });

  it('takes the event id from the body, the bytes unchanged and the attempt from x-attempt (1 when absent)', () => {
    const body = '{"id":"evt_9","sequence":2}';
    expect(parseDeliveryMessage(message(body, 'evt_9'))).toEqual({ ok: true, message: { eventId: 'evt_9', body: Buffer.from(body), attempt: 1 } });
    expect(parseDeliveryMessage(message(body, undefined, { [ATTEMPT_HEADER]: 4 }))).toMatchObject({ ok: true, message: { attempt: 4 } });
  });

  it.each([
    ['a body that is not JSON', message('nope', 'evt_1')],
    ['a body without an id', message('{"type":"deposit.pending"}', 'evt_1')],
    ['a messageId that differs from the body id', message('{"id":"evt_2"}', 'evt_1')],
    ['JSON null', message('null')],
  ])('rejects %s', (_label, m) => {
    expect(parseDeliveryMessage(m)).toMatchObject({ ok: false, reason: expect.any(String) });
  });
});

describe('urlForEventType', () => {
  const urls = { deposit: 'https://m.example/d', withdraw: 'https://m.example/w' };
  it('routes deposit.* to the deposit URL and withdraw.* to the withdraw URL', () => {
    expect(urlForEventType('deposit.completed', urls)).toBe(urls.deposit);
    expect(urlForEventType('withdraw.failed', urls)).toBe(urls.withdraw);
    expect(urlForEventType('withdraw.pending', { ...urls, withdraw: null })).toBeNull();
    expect(urlForEventType('refund.pending', urls)).toBeNull();
  });
});

describe('retryPlan', () => {
  it('allows 1 + delays attempts and waits delays[n-1] after attempt n', () => {
    const plan = retryPlan([5000, 10000, 20000, 40000, 80000]);
    expect(plan.maxAttempts).toBe(6);
    expect([1, 2, 3, 4, 5, 6].map((n) => plan.delayAfter(n))).toEqual([5000, 10000, 20000, 40000, 80000, undefined]);
  });
});
