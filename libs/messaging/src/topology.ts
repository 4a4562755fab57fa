/**
 * The RabbitMQ topology of the callback path, as data, in one place (rascal's habit): every
 * exchange, queue, argument and binding is listed here and asserted at connect by whoever uses it.
 *
 *   <p>tx.events (topic) ──'*.*'──────▶ <p>callbacks.deliver ◀──'callbacks.deliver'── <p>callbacks.dlx (direct)
 *                        ──'manual.#'──▶ <p>callbacks.manual  ◀──'callbacks.manual'───┘   ▲ dead-lettered on TTL
 *   callback-svc ──default exchange──▶ <p>callbacks.retry.5s | .10s | .20s | .40s | .80s (x-message-ttl each)
 *   callback-svc ──default exchange──▶ <p>callbacks.throttle.1s | .5s | .15s | .30s       (x-message-ttl each)
 *   and the same waits for the manual lane: <p>callbacks.manual.retry.5s …, <p>callbacks.manual.throttle.1s …
 *
 * Two lanes. New events (routing key = the event type, `deposit.pending`) go to the automatic lane,
 * callbacks.deliver. Series a merchant starts at will (recovery, redelivery: routing key
 * `manual.<type>`) and deliveries the sweeper publishes again go to the manual lane,
 * callbacks.manual, which callback-svc consumes with a small prefetch of its own: a recovery of
 * 10,000 events never stands in front of anyone's new callbacks. Each lane has its own retry and
 * throttle queues dead-lettering back to it, so a manual series stays in its lane for all its
 * attempts.
 *
 * The throttle queues hold a message whose merchant has used its share of delivery capacity (its
 * endpoint is slow or hangs): the message waits there, not in a process and not in front of other
 * merchants' messages, and comes back to the delivery queue without counting as an attempt.
 *
 * Why quorum queues: they are RabbitMQ's replicated durable queue type (classic mirroring is
 * deprecated), and since 3.10 they support both message TTL and *at-least-once* dead-lettering
 * (`x-dead-letter-strategy: at-least-once`, which needs `x-overflow: reject-publish`): the broker
 * keeps an expired retry message until the delivery queue has confirmed it, where a classic queue
 * (or a quorum queue's default at-most-once strategy) may drop it on the way. Losing a retry would
 * lose a callback, so the retry queues use it.
 *
 * The delivery queue has an explicit `x-delivery-limit` (RabbitMQ 4 gives quorum queues a default
 * of 20 and, without a dead-letter target, drops a message past it; 3.10 has none): a message
 * handed back that many times (say, while PostgreSQL is down) is dead-lettered to
 * <p>callbacks.parked, where it waits for an operator's eyes (and expires after a week). Nothing is
 * lost with it: the delivery row still says pending or retrying, and the sweeper (callback-svc)
 * publishes the delivery again once nothing has been seen of it for longer than any wait.
 *
 * Changing the retry delays: each retry queue's name is derived from its delay, so a new delay is a
 * new queue and declares cleanly. Queues of delays no longer configured keep dead-lettering what
 * they hold back to the delivery queue; once `rabbitmqctl list_queues name messages` shows them
 * empty, delete them (`rabbitmqctl delete_queue <name> --if-empty`). Changing the *arguments* of an
 * existing name (queue type, TTL, dead-letter target) is refused with PRECONDITION_FAILED and
 * would stop every consumer's connect: drain and delete that queue first, or use a new
 * `AMQP_PREFIX`.
 */
import type { Channel, Options } from 'amqplib';

/** `automatic`: new events. `manual`: series a merchant started (recovery, redelivery) and sweeps. */
export type Lane = 'automatic' | 'manual';
export const LANES: readonly Lane[] = ['automatic', 'manual'];

/** The queues of one delivery lane: where its messages are consumed and where they wait. */
export interface LaneNames {
  lane: Lane;
  queue: string;
  retryQueue(delayMs: number): string;
  throttleQueue(delayMs: number): string;
}

/** The routing key prefix that sends an event to the manual lane: `manual.deposit.completed`. */
export const MANUAL_ROUTING_PREFIX = 'manual.';
/** Event types are two words (`deposit.pending`); the manual lane's keys are three. */
const AUTOMATIC_ROUTING_PATTERN = '*.*';
const MANUAL_ROUTING_PATTERN = `${MANUAL_ROUTING_PREFIX}#`;

export interface MessagingNames {
  eventsExchange: string;
  /** The automatic lane's queue and waits (`lane('automatic')`). */
  deliverQueue: string;
  retryQueue(delayMs: number): string;
  throttleQueue(delayMs: number): string;
  /** The manual lane's queue. */
  manualQueue: string;
  lane(lane: Lane): LaneNames;
  parkedQueue: string;
  deadLetterExchange: string;
  tokenExchange: string;
}

/** Every name of the topology, under a prefix so environments and test files share a broker safely. */
export function messagingNames(prefix: string): MessagingNames {
  // The automatic lane keeps the names it had before there were lanes.
  const lanes: Record<Lane, LaneNames> = {
    automatic: laneNames('automatic', `${prefix}callbacks.deliver`, `${prefix}callbacks`),
    manual: laneNames('manual', `${prefix}callbacks.manual`, `${prefix}callbacks.manual`),
  };
  return {
    eventsExchange: `${prefix}tx.events`,
    deliverQueue: lanes.automatic.queue,
    retryQueue: lanes.automatic.retryQueue,
    throttleQueue: lanes.automatic.throttleQueue,
    manualQueue: lanes.manual.queue,
    lane: (lane) => lanes[lane],
    parkedQueue: `${prefix}callbacks.parked`,
    deadLetterExchange: `${prefix}callbacks.dlx`,
    tokenExchange: `${prefix}merchant.tokens`,
  };
}

function laneNames(lane: Lane, queue: string, waitsUnder: string): LaneNames {
  return {
    lane,
    queue,
    retryQueue: (delayMs) => `${waitsUnder}.retry.${delayLabel(delayMs)}`,
    throttleQueue: (delayMs) => `${waitsUnder}.throttle.${delayLabel(delayMs)}`,
  };
}

/** `5000` → `5s`, `1500` → `1500ms`: readable names for whole seconds, exact ones otherwise. */
export function delayLabel(delayMs: number): string {
  if (!Number.isSafeInteger(delayMs) || delayMs < 1) throw new RangeError(`retry delay must be a positive integer of ms, got ${delayMs}`);
  return delayMs % 1000 === 0 ? `${delayMs / 1000}s` : `${delayMs}ms`;
}

export interface ExchangeSpec {
  name: string;
  type: 'topic' | 'direct' | 'fanout';
  options: Options.AssertExchange;
}

export interface QueueSpec {
  name: string;
  options: Options.AssertQueue;
}

export interface BindingSpec {
  queue: string;
  exchange: string;
  routingKey: string;
}

export interface Topology {
  exchanges: ExchangeSpec[];
  queues: QueueSpec[];
  bindings: BindingSpec[];
  /** Bindings an earlier version declared and this one must not have: removed at assert, after the new ones exist. */
  unbindings?: BindingSpec[];
}

const QUORUM = { 'x-queue-type': 'quorum' } as const;

/**
 * How long a throttled message waits, by how many times it has been throttled before (the last
 * repeats): a merchant whose endpoint frees a slot soon is served again within a second, one whose
 * endpoint hangs costs the broker one hand-over per message every 30 s at most.
 */
export const THROTTLE_DELAYS_MS: readonly number[] = [1_000, 5_000, 15_000, 30_000];

/** Times a message may be handed to a consumer of the delivery queue before it is parked. */
const DEFAULT_DELIVERY_LIMIT = 20;
/** How long a parked message is kept for inspection (the delivery itself is swept from the database). */
const PARKED_TTL_MS = 7 * 24 * 3600 * 1000;

/** The exchanges, queues and bindings callback delivery needs, one retry queue per distinct delay. */
export function callbackTopology({
  prefix,
  retryDelaysMs,
  deliveryLimit = DEFAULT_DELIVERY_LIMIT,
}: {
  prefix: string;
  retryDelaysMs: readonly number[];
  deliveryLimit?: number;
}): Topology {
  const n = messagingNames(prefix);
  const delayQueue = (name: string, delayMs: number, backTo: string): QueueSpec => ({
    name,
    options: {
      durable: true,
      arguments: {
        ...QUORUM,
        // One TTL per queue: RabbitMQ expires only at the head, so mixed TTLs would block each other.
        'x-message-ttl': delayMs,
        'x-dead-letter-exchange': n.deadLetterExchange,
        'x-dead-letter-routing-key': backTo,
        'x-dead-letter-strategy': 'at-least-once',
        'x-overflow': 'reject-publish',
      },
    },
  });
  const laneQueues = (lane: LaneNames): QueueSpec[] => [
    {
      name: lane.queue,
      options: {
        durable: true,
        arguments: {
          ...QUORUM,
          'x-delivery-limit': deliveryLimit,
          'x-dead-letter-exchange': n.deadLetterExchange,
          'x-dead-letter-routing-key': n.parkedQueue,
          'x-dead-letter-strategy': 'at-least-once',
          'x-overflow': 'reject-publish',
        },
      },
    },
    ...[...new Set(retryDelaysMs)].map((delayMs) => delayQueue(lane.retryQueue(delayMs), delayMs, lane.queue)),
    ...THROTTLE_DELAYS_MS.map((delayMs) => delayQueue(lane.throttleQueue(delayMs), delayMs, lane.queue)),
  ];
  const automatic = n.lane('automatic');
  const manual = n.lane('manual');
  return {
    exchanges: [
      { name: n.eventsExchange, type: 'topic', options: { durable: true } },
      { name: n.deadLetterExchange, type: 'direct', options: { durable: true } },
    ],
    queues: [
      ...laneQueues(automatic),
      ...laneQueues(manual),
      { name: n.parkedQueue, options: { durable: true, arguments: { ...QUORUM, 'x-message-ttl': PARKED_TTL_MS } } },
    ],
    bindings: [
      { queue: automatic.queue, exchange: n.eventsExchange, routingKey: AUTOMATIC_ROUTING_PATTERN },
      { queue: manual.queue, exchange: n.eventsExchange, routingKey: MANUAL_ROUTING_PATTERN },
      { queue: automatic.queue, exchange: n.deadLetterExchange, routingKey: automatic.queue },
      { queue: manual.queue, exchange: n.deadLetterExchange, routingKey: manual.queue },
      { queue: n.parkedQueue, exchange: n.deadLetterExchange, routingKey: n.parkedQueue },
    ],
    // Before the manual lane, the delivery queue took every key ('#'): it would take manual.* too.
    unbindings: [{ queue: automatic.queue, exchange: n.eventsExchange, routingKey: '#' }],
  };
}

/** The fanout the merchant CLI broadcasts token rotations on (each gateway binds its own queue). */
export function tokenTopology(prefix: string): Topology {
  return {
    exchanges: [{ name: messagingNames(prefix).tokenExchange, type: 'fanout', options: { durable: true } }],
    queues: [],
    bindings: [],
  };
}

/**
 * Declares everything (idempotent: asserting what exists with the same arguments is a no-op). A
 * queue that exists with other arguments makes the broker close the channel with
 * PRECONDITION_FAILED; the error names the queue, see the header comment for what to do.
 */
export async function assertTopology(channel: Channel, topology: Topology): Promise<void> {
  for (const e of topology.exchanges) await channel.assertExchange(e.name, e.type, e.options);
  for (const q of topology.queues) {
    if (hasDeadLetterWorker(q)) declaredAt.set(q.name, Date.now());
    await channel.assertQueue(q.name, q.options);
  }
  for (const b of topology.bindings) await channel.bindQueue(b.queue, b.exchange, b.routingKey);
  // Unbinding what does not exist is a no-op for RabbitMQ, so this is idempotent too.
  for (const b of topology.unbindings ?? []) await channel.unbindQueue(b.queue, b.exchange, b.routingKey);
}

/**
 * How long a queue with at-least-once dead-lettering must have existed before deleteTopology
 * deletes it. RabbitMQ 3.10 starts a dead-letter worker for such a queue once it is declared; a
 * queue deleted before its worker has looked it up crash-loops that worker (`{badmatch,{error,
 * not_found}}` in rabbit_fifo_dlx_worker) until rabbit_fifo_dlx_sup gives up, whatever its restart
 * intensity, and every such queue of the broker then stops dead-lettering: retries never return
 * (docs/operations.md, 541 INTERNAL_ERROR). Seen when a test's teardown deleted the queues a relay
 * was still declaring; a second is far beyond the milliseconds the worker needs.
 */
export const DEAD_LETTER_WORKER_SETTLE_MS = 1000;

/** When this process last asked to declare each queue that has a dead-letter worker (queue name → ms). */
const declaredAt = new Map<string, number>();

const hasDeadLetterWorker = (q: QueueSpec) => q.options.arguments?.['x-dead-letter-strategy'] === 'at-least-once';

/**
 * Deletes every queue and exchange of `topology`, the inverse of assertTopology: for tests and
 * benchmarks that declared their own under a private prefix. Deleting a name that does not exist
 * is a no-op for RabbitMQ. Messages in the queues are lost with them: never point it at a prefix in use.
 *
 * It first lets every queue with a dead-letter worker live DEAD_LETTER_WORKER_SETTLE_MS, counted
 * from when this process last declared it. A queue this process did not declare (another process
 * did, say the services of an end-to-end stack) is given that long from now, as the broker cannot
 * say how old a queue is.
 */
export async function deleteTopology(channel: Channel, topology: Topology): Promise<void> {
  await settleDeadLetterWorkers(topology.queues.filter(hasDeadLetterWorker));
  for (const q of topology.queues) await channel.deleteQueue(q.name);
  for (const e of topology.exchanges) await channel.deleteExchange(e.name);
}

async function settleDeadLetterWorkers(queues: QueueSpec[]): Promise<void> {
  const now = Date.now();
  const until = Math.max(now, ...queues.map((q) => (declaredAt.get(q.name) ?? now) + DEAD_LETTER_WORKER_SETTLE_MS));
  if (until > now) await new Promise((resolve) => setTimeout(resolve, until - now));
  for (const q of queues) declaredAt.delete(q.name);
}

/** Both topologies in one, for a process that needs several (assertion order is kept). */
export function mergeTopologies(...parts: Topology[]): Topology {
  return {
    exchanges: parts.flatMap((p) => p.exchanges),
    queues: parts.flatMap((p) => p.queues),
    bindings: parts.flatMap((p) => p.bindings),
    unbindings: parts.flatMap((p) => p.unbindings ?? []),
  };
}
