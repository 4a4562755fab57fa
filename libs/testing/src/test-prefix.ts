/**
 * The prefix a test run, or a benchmark, declares its RabbitMQ queues and exchanges under:
 * `test.<label>.<8 hex>.`. One shape for every run, so `npm run broker:leftovers`
 * (scripts/broker-leftovers.mjs, whose TEST_PREFIX matches exactly this) can tell what a killed run
 * left behind from anything else by its name alone. The label may hold dots (`callback-svc.retries`)
 * but no segment of exactly 8 hex digits: the first such segment ends the prefix.
 */
import { randomBytes } from 'node:crypto';

const LABEL = /^(?:[A-Za-z0-9_-]+\.)*[A-Za-z0-9_-]+$/;
const HEX8 = /^[0-9a-f]{8}$/;

/** `id`: the run's 8 hex digits, when the run names other things (its database) with them too. */
export function testPrefix(label: string, id: string = randomBytes(4).toString('hex')): string {
  if (!LABEL.test(label) || label.split('.').some((segment) => HEX8.test(segment))) throw new Error(`not a test prefix label: ${label}`);
  if (!HEX8.test(id)) throw new Error(`a test prefix id is 8 hex digits, got ${id}`);
  return `test.${label}.${id}.`;
}
