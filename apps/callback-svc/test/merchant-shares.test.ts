import { MerchantShares, type Admission, type Slot } from '../src/delivery';

let clock = 0;
const shares = (overrides: Partial<ConstructorParameters<typeof MerchantShares>[0]> = {}) =>
  new MerchantShares({ perMerchant: 2, slowPerMerchant: 1, slowAfterMs: 1000, capacity: 20, horizonMs: 30_000, sweepIntervalMs: 60_000, now: () => clock, ...overrides });
const run = (a: Admission | Promise<Admission>): Slot => {
  if (a instanceof Promise || a.kind !== 'run') throw new Error(`expected to run now, got ${a instanceof Promise ? 'wait' : a.kind}`);
  return a.slot;
};

/** An attempt that got its 200 after `durationMs`. */
const succeeded = (durationMs: number) => ({ durationMs, succeeded: true });

beforeEach(() => {
  clock = 0;
});

describe('MerchantShares', () => {
  it('runs up to the merchant’s share at once; the next waits for a slot, in order', async () => {
    const s = shares();
    const a1 = run(s.admit('a'));
    run(s.admit('a'));
    const third = s.admit('a');
    expect(third).toBeInstanceOf(Promise);
    expect(s.stats('a')).toEqual({ running: 2, waiting: 1, slow: false });
    a1.release(succeeded(10));
    expect((await third).kind).toBe('run');
    s.close();
  });

  it('gives each merchant its own share: a full one never blocks another', () => {
    const s = shares();
    run(s.admit('a'));
    run(s.admit('a'));
    expect(s.admit('a')).toBeInstanceOf(Promise);
    expect(s.admit('b')).toMatchObject({ kind: 'run' });
    s.close();
  });

  it('narrows a slow merchant to its slow share and throttles beyond what its slots get through in the horizon', () => {
    const s = shares();
    run(s.admit('a')).release(succeeded(5000)); // mean 5 s: slow
    run(s.admit('a')); // slow share: 1 in flight
    // waiting limit: 1 slot × 30 s / 5 s = 6
    for (let i = 0; i < 6; i++) expect(s.admit('a')).toBeInstanceOf(Promise);
    expect(s.admit('a')).toEqual({ kind: 'throttle' });
    expect(s.admit('b')).toMatchObject({ kind: 'run' });
    s.close();
  });

  it('holds a merchant whose endpoint fails, however fast, to the slow share and throttles its excess, until it succeeds again', async () => {
    const s = shares({ capacity: 8 });
    const failed = { durationMs: 1, succeeded: false };
    const inFlight = run(s.admit('a')); // a burst: one of a's callbacks is in flight throughout
    // Fast failures: the mean duration stays far below slowAfterMs, yet after a few the endpoint is failing.
    for (let i = 0; i < 3; i++) run(s.admit('a')).release(failed);
    expect(s.stats('a')).toEqual({ running: 1, waiting: 0, slow: false }); // 1 - 0.8³ = 0.49: not yet
    run(s.admit('a')).release(failed);
    expect(s.stats('a').slow).toBe(true);
    // The slow share (1) is taken; it may keep its part of the slow half waiting (8 / 2 - 1 = 3), no more.
    const waiting = [1, 2, 3].map(() => s.admit('a'));
    for (const w of waiting) expect(w).toBeInstanceOf(Promise);
    expect(s.admit('a')).toEqual({ kind: 'throttle' });
    expect(s.admit('b')).toMatchObject({ kind: 'run' }); // another merchant is admitted at once
    // Successes bring it back to the full share (2 in flight).
    inFlight.release(succeeded(1));
    run(await waiting[0]!).release(succeeded(1));
    run(await waiting[1]!).release(succeeded(1));
    run(await waiting[2]!).release(succeeded(1));
    expect(s.stats('a').slow).toBe(false);
    s.close();
  });

  it('throttles slow merchants once they hold half the capacity, keeping the other half for the rest', () => {
    const s = shares({ capacity: 4 });
    run(s.admit('a')).release(succeeded(5000));
    run(s.admit('b')).release(succeeded(5000));
    run(s.admit('a'));
    run(s.admit('b'));
    expect(s.admit('a')).toEqual({ kind: 'throttle' });
    expect(s.admit('c')).toMatchObject({ kind: 'run' });
    s.close();
  });

  it('splits the slow half evenly between slow merchants: one slow merchant’s backlog does not keep another out', async () => {
    const s = shares({ capacity: 40, sweepIntervalMs: 10 });
    const settled = async (p: Admission | Promise<Admission>) => Promise.race([p, new Promise((resolve) => setTimeout(() => resolve('waiting'), 5))]);
    run(s.admit('b')).release(succeeded(1500)); // b's endpoint is slow (mean 1.5 s)
    run(s.admit('a')).release(succeeded(1500)); // and so is a's
    await new Promise((resolve) => setTimeout(resolve, 30)); // a sweep counts them: 2 slow merchants
    run(s.admit('a')); // a's slow share: 1 in flight
    // Alone, a could keep what its slot gets through in 30 s (20); with b slow too, its even part of
    // the slow half (20 / 2 = 10, its slot included).
    const aWaiting = Array.from({ length: 9 }, () => s.admit('a'));
    expect(await Promise.all(aWaiting.map(settled))).toEqual(Array(9).fill('waiting'));
    expect(s.admit('a')).toEqual({ kind: 'throttle' });
    // b gets the same part.
    run(s.admit('b'));
    const bWaiting = Array.from({ length: 9 }, () => s.admit('b'));
    expect(await Promise.all(bWaiting.map(settled))).toEqual(Array(9).fill('waiting'));
    expect(s.admit('b')).toEqual({ kind: 'throttle' });
    s.close();
  });

  it('trims a slow merchant’s backlog to its even part once another merchant turns slow', async () => {
    const s = shares({ capacity: 40, sweepIntervalMs: 10 });
    const settled = async (p: Admission | Promise<Admission>) => Promise.race([p, new Promise((resolve) => setTimeout(() => resolve('waiting'), 5))]);
    run(s.admit('a')).release(succeeded(1500));
    await new Promise((resolve) => setTimeout(resolve, 30)); // a is the only slow merchant
    run(s.admit('a'));
    const aWaiting = Array.from({ length: 19 }, () => s.admit('a')); // 20 (the slow half) less its slot
    expect(await Promise.all(aWaiting.map(settled))).toEqual(Array(19).fill('waiting'));
    expect(s.admit('b')).toMatchObject({ kind: 'run' }); // b is not slow yet: its fast share is untouched
    run(s.admit('c')).release(succeeded(1500)); // c turns slow
    await new Promise((resolve) => setTimeout(resolve, 30)); // the next sweep
    const outcomes = await Promise.all(aWaiting.map(settled));
    // a keeps its oldest 9 waiting; its 10 newest go to the throttle queue (not attempts).
    expect(outcomes).toEqual([...Array(9).fill('waiting'), ...Array(10).fill({ kind: 'throttle' })]);
    expect(s.admit('c')).toMatchObject({ kind: 'run' });
    s.close();
  });

  it('treats a merchant as slow as soon as one HTTP attempt has been waiting longer than slowAfterMs', () => {
    const s = shares();
    const slot = run(s.admit('a'));
    clock = 1500;
    expect(s.stats('a').slow).toBe(false); // our own work before the attempt (the claim) does not count
    slot.sending();
    clock = 3100;
    expect(s.stats('a').slow).toBe(true);
    s.close();
  });

  it('hands every waiting message back on close', async () => {
    const s = shares();
    run(s.admit('a'));
    run(s.admit('a'));
    const waiting = s.admit('a');
    s.close();
    expect(await waiting).toEqual({ kind: 'closed' });
    expect(s.admit('b')).toEqual({ kind: 'closed' });
  });
});
