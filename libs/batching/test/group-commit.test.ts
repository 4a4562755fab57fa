import { groupCommit } from '../src';

describe('groupCommit', () => {
  it('runs the first call at once and batches the calls that arrive meanwhile', async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const double = groupCommit(async (items: number[]) => {
      batches.push(items);
      if (batches.length === 1) await gate;
      return items.map((i) => i * 2);
    }, { concurrency: 1 });
    const first = double(1);
    const rest = [double(2), double(3), double(4)];
    release();
    expect(await Promise.all([first, ...rest])).toEqual([2, 4, 6, 8]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('rejects every call of a failed batch', async () => {
    const fail = groupCommit(async (): Promise<number[]> => {
      throw new Error('database away');
    });
    await expect(Promise.all([fail(1), fail(2)])).rejects.toThrow('database away');
  });
});
