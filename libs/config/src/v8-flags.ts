import { setFlagsFromString } from 'node:v8';

/**
 * V8 settings of every service process that NODE_OPTIONS cannot carry (Node accepts only a few V8
 * flags there), so each app's preloaded `instrumentation.ts` applies them as its first statement.
 *
 * `--no-allocation-site-pretenuring`: V8 watches which allocation sites' objects survive young
 * collections and, past a threshold, allocates that site's objects straight into the old
 * generation. In a request server it fired on the request's own objects whenever the process was
 * briefly slow (start-up, a neighbour's burst), and stayed on: from then on every request's streams,
 * listeners and handlers (15–20 KB of its 47 KB) went to the old generation, which filled every
 * 300–400 ms and was mark-compacted, about 35 times in 10 s where 1–3 sufficed. Which state a process
 * fell into was chance, and it was the "bimodal" cost of the gateway (docs/benchmarks.md, issue 20):
 * 299–424 µs per forwarded request in that state, 164–256 µs with pretenuring off, in every process.
 */
export const SERVICE_V8_FLAGS = ['--no-allocation-site-pretenuring'] as const;

/** Applies SERVICE_V8_FLAGS to this process; call it first, from the preloaded module. */
export function applyServiceV8Flags(): void {
  for (const flag of SERVICE_V8_FLAGS) setFlagsFromString(flag);
}
