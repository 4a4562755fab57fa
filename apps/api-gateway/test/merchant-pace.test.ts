import { Readable } from 'node:stream';
import { MerchantPace } from '../src/merchant-pace';

describe('MerchantPace', () => {
  it('lets a burst of bytesPerSecond through at once, then makes each merchant wait for its own bytes', () => {
    let now = 0;
    const pace = new MerchantPace(1000, () => now);
    expect(pace.spend('a', 600)).toBe(0);
    expect(pace.spend('a', 400)).toBe(0);
    expect(pace.spend('a', 500)).toBe(500); // 500 bytes past the burst: half a second
    expect(pace.spend('b', 1000)).toBe(0); // another merchant's burst is its own
    now += 500;
    expect(pace.spend('a', 100)).toBe(100); // refilled 500, which paid the debt: 100 more is 0.1 s
    now += 10_000;
    expect(pace.spend('a', 1000)).toBe(0); // refilled to the burst, never beyond
    expect(pace.spend('a', 1)).toBe(1);
  });

  it('passes a body on whole, no faster than the pace', async () => {
    const pace = new MerchantPace(64 * 1024);
    const chunks = Array.from({ length: 8 }, (_, i) => Buffer.alloc(16 * 1024, i));
    const started = performance.now();
    const out: Buffer[] = [];
    for await (const chunk of pace.paced('m', Readable.from(chunks))) out.push(chunk as Buffer);
    expect(Buffer.concat(out).equals(Buffer.concat(chunks))).toBe(true);
    // 128 KiB at 64 KiB a second after a burst of 64 KiB: at least a second.
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
  });
});
