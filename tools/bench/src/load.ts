/**
 * Creates deposits through the gateway from the bench process, for scenarios that must know each
 * transaction's id and when its 201 arrived (load-process.ts does the closed-loop throughput figures).
 */
import { Pool } from 'undici';

export interface Created {
  id: string;
  /** Date.now() when the 201 arrived (same clock as the receiver's arrivals). */
  at: number;
  ms: number;
}

let orderSeq = 0;

export function gatewayClient(gateway: string, connections = 50) {
  const pool = new Pool(gateway, { connections });
  async function create(token: string): Promise<Created | undefined> {
    const sent = performance.now();
    const res = await pool.request({
      path: '/api/createDeposit',
      method: 'POST',
      headers: { 'content-type': 'application/json', serviceApiToken: token },
      body: JSON.stringify({ amount: '1.00', currency: 'USD', orderId: `b-${process.pid}-${++orderSeq}` }),
    });
    const text = await res.body.text();
    if (res.statusCode !== 201) return undefined;
    return { id: JSON.parse(text).id, at: Date.now(), ms: performance.now() - sent };
  }
  return {
    /** `count` creates, `concurrency` at a time; failures are counted, not thrown. */
    async burst(token: string, count: number, concurrency: number): Promise<{ created: Created[]; failed: number }> {
      const created: Created[] = [];
      let failed = 0;
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(count, concurrency) }, async () => {
          while (next < count) {
            next++;
            const c = await create(token).catch(() => undefined);
            if (c) created.push(c);
            else failed++;
          }
        }),
      );
      return { created, failed };
    },
    /** Open loop: `rate` creates per second for `seconds`, sent on schedule whatever the replies. */
    async steady(token: string, rate: number, seconds: number): Promise<{ created: Created[]; failed: number }> {
      const created: Created[] = [];
      let failed = 0;
      const total = Math.round(rate * seconds);
      const inflight: Promise<void>[] = [];
      const start = performance.now();
      let sent = 0;
      while (sent < total) {
        const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
        for (; sent < due; sent++) {
          inflight.push(
            create(token)
              .then((c) => (c ? created.push(c) : failed++), () => failed++)
              .then(() => undefined),
          );
        }
        await new Promise((r) => setTimeout(r, 2));
      }
      await Promise.all(inflight);
      return { created, failed };
    },
    close: () => pool.close(),
  };
}
