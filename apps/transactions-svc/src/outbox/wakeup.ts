/**
 * How the relay's loop waits: a sleep that a NOTIFY may cut short (`wake`), and one that only
 * `stop` cuts short (the backoff after a failure, so a burst of NOTIFYs cannot turn it into a spin).
 */
export class Wakeup {
  private pending = false;
  private stopped = false;
  private wakers = new Set<(how: 'wake' | 'stop') => void>();

  /** Ends the current wakeable wait, or the next one if none is under way. */
  wake(): void {
    this.pending = true;
    for (const w of this.wakers) w('wake');
  }

  /** Ends every wait now and later. */
  stop(): void {
    this.stopped = true;
    for (const w of this.wakers) w('stop');
  }

  /** Waits `ms`, or less if woken (or stopped); a wake that came while busy ends it at once. */
  untilWoken(ms: number): Promise<void> {
    if (this.pending || this.stopped) {
      this.pending = false;
      return Promise.resolve();
    }
    return this.wait(ms, () => true).then(() => {
      this.pending = false;
    });
  }

  /** Waits `ms` unless stopped; wakes are remembered for the next untilWoken. */
  sleep(ms: number): Promise<void> {
    return this.stopped ? Promise.resolve() : this.wait(ms, (how) => how === 'stop');
  }

  /** Resolves when `promise` settles, after `ms`, or on stop, whichever comes first. */
  race(promise: Promise<unknown>, ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return this.wait(ms, (how) => how === 'stop', promise);
  }

  private wait(ms: number, endsOn: (how: 'wake' | 'stop') => boolean, also?: Promise<unknown>): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(waker);
        resolve();
      };
      const waker = (how: 'wake' | 'stop') => {
        if (endsOn(how)) done();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(waker);
      also?.then(done, done);
    });
  }
}
