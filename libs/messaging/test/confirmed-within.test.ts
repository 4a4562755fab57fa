import { ConfirmTimeoutError, confirmedWithin } from '../src';

describe('confirmedWithin (the bound on how long claimed rows wait for the broker)', () => {
  it('resolves with the confirms when they settle in time', async () => {
    await expect(confirmedWithin(Promise.resolve('confirmed'), 1000)).resolves.toBe('confirmed');
  });

  it('rejects with the confirms’ own error when they fail in time', async () => {
    await expect(confirmedWithin(Promise.reject(new Error('nacked')), 1000)).rejects.toThrow('nacked');
  });

  it('rejects with ConfirmTimeoutError once the time is up while the confirms hang', async () => {
    const started = Date.now();
    const hanging = new Promise<void>(() => undefined);
    await expect(confirmedWithin(hanging, 100)).rejects.toBeInstanceOf(ConfirmTimeoutError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
  });
});
