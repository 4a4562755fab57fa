// Deletes RabbitMQ queues and exchanges that test runs left behind.
//
//   npm run broker:leftovers                     every test prefix none of whose queues has a consumer
//   node scripts/broker-leftovers.mjs PREFIX...  everything under these prefixes (a run's own, on exit)
//
// Every test run (the benchmark's and the image test's too) declares its broker objects under a
// prefix of its own, `test.<label>.<8 hex>.`, from testPrefix() in libs/testing (the image test
// writes the same shape in shell); test-prefix-pattern.mjs matches it.
// A test that ends deletes them; one killed mid-run (a benchmark stopped by hand, a CI run that
// timed out) does not, and its quorum queues (each a Raft member the broker keeps ticking) add up
// on a machine whose broker outlives many runs. A prefix none of whose queues has a consumer
// belongs to no live process; any prefix with a consumer is left alone. .ci/run runs the first form
// before the tests; tools/deploy-tests/image/test-image.sh the second on exit.
//
// Lists through rabbitmqctl (AMQP cannot list), so it needs the broker on this machine; deletes
// over AMQP_URL (default guest@127.0.0.1:5672). Prints one line.
import { execFileSync } from 'node:child_process';
import amqp from 'amqplib';
import { TEST_PREFIX } from './test-prefix-pattern.mjs';

const list = (what, columns) =>
  execFileSync('rabbitmqctl', [what, '-q', '--no-table-headers', ...columns], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.trim().split(/\t/))
    .filter(([name]) => name);

const given = process.argv.slice(2);
const queues = list('list_queues', ['name', 'consumers']);
const exchanges = list('list_exchanges', ['name']).map(([name]) => name);

let prefixes;
let summary;
if (given.length > 0) {
  prefixes = given;
  summary = `under ${given.join(', ')}`;
} else {
  const live = new Set();
  const found = new Set();
  for (const [name, consumers] of queues) {
    const prefix = TEST_PREFIX.exec(name)?.[1];
    if (!prefix) continue;
    found.add(prefix);
    if (Number(consumers) > 0) live.add(prefix);
  }
  for (const name of exchanges) {
    const prefix = TEST_PREFIX.exec(name)?.[1];
    if (prefix) found.add(prefix);
  }
  prefixes = [...found].filter((p) => !live.has(p));
  summary = `of the ${prefixes.length} test prefixes without a consumer (${live.size} live left alone)`;
}
const under = (name) => prefixes.some((p) => name.startsWith(p));
const doomedQueues = queues.map(([name]) => name).filter(under);
const doomedExchanges = exchanges.filter(under);

if (doomedQueues.length + doomedExchanges.length > 0) {
  const conn = await amqp.connect(process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672');
  const ch = await conn.createChannel();
  for (const name of doomedQueues) await ch.deleteQueue(name);
  for (const name of doomedExchanges) await ch.deleteExchange(name);
  await conn.close();
}
console.log(`broker: deleted ${doomedQueues.length} queues and ${doomedExchanges.length} exchanges ${summary}`);
