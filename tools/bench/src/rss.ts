/** Samples the VmRSS of named processes every 200 ms and keeps each one's maximum. */
import { rssMb } from './processes';

export class RssSampler {
  private readonly max: Record<string, number> = {};
  private timer?: NodeJS.Timeout;
  constructor(private readonly pids: () => Record<string, number | undefined>) {}

  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), 200);
    return this;
  }

  private sample() {
    for (const [name, pid] of Object.entries(this.pids())) {
      const mb = rssMb(pid);
      if (mb !== undefined) this.max[name] = Math.max(this.max[name] ?? 0, mb);
    }
  }

  stop(): Record<string, number> {
    this.sample();
    clearInterval(this.timer);
    return { ...this.max };
  }
}
