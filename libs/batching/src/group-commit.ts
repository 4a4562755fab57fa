/**
 * Group commit for the delivery's two statements (claim, record): calls that arrive while a batch
 * is running join the next batch, so a busy process writes one statement per batch instead of one
 * per callback, and an idle one runs each call at once (no timer, no added latency). Written here
 * rather than taken from a library: dataloader batches per event-loop tick, not while a batch is in
 * flight, which is what keeps round trips down when PostgreSQL is the slow part.
 *
 * One batch at a time unless told otherwise: while it runs, the next one gathers everything that
 * arrives. For callback-svc's statements, two at a time made the batches half as big and cost
 * PostgreSQL about twice the CPU per delivery (docs/decisions.md). A batch serves many callers, so
 * it runs outside any one caller's trace.
 */
import { outsideTraces } from '@dw/telemetry';

export type BatchFn<I, O> = (items: I[]) => Promise<O[]>;

export function groupCommit<I, O>(run: BatchFn<I, O>, { maxBatch = 500, concurrency = 1 } = {}): (item: I) => Promise<O> {
  let queue: Array<{ item: I; resolve: (o: O) => void; reject: (e: unknown) => void }> = [];
  let active = 0;

  const flush = () => {
    while (active < concurrency && queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      active++;
      outsideTraces(() => run(batch.map((b) => b.item))).then(
        (results) => batch.forEach((b, i) => b.resolve(results[i]!)),
        (err: unknown) => batch.forEach((b) => b.reject(err)),
      ).finally(() => {
        active--;
        flush();
      });
    }
  };

  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      flush();
    });
}
