/** Prometheus metrics of callback delivery, served by GET /metrics. */
import { metricsRegistry } from '@dw/telemetry';
import { Counter, Gauge, Histogram } from 'prom-client';

export const callbackAttempts = new Counter({
  name: 'callback_attempts_total',
  help: 'Callback HTTP attempts by outcome (succeeded, http_status, timeout, network_error, private_address, aborted).',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});

export const callbackAttemptDuration = new Histogram({
  name: 'callback_attempt_duration_seconds',
  help: 'Duration of one callback HTTP attempt, connect to end of the reply body, in seconds.',
  labelNames: ['outcome'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
  registers: [metricsRegistry],
});

export const callbackDeliveries = new Counter({
  name: 'callback_deliveries_total',
  help: 'Delivery status changes written: succeeded, retrying, failed, skipped.',
  labelNames: ['status'] as const,
  registers: [metricsRegistry],
});

export const callbackDeliveryLatency = new Histogram({
  name: 'callback_delivery_latency_seconds',
  help: 'From the event being committed to the merchant answering 200, retries included, in seconds.',
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  registers: [metricsRegistry],
});

export const invalidDeliveryMessages = new Counter({
  name: 'callback_invalid_messages_total',
  help: 'Messages dropped from the delivery queue: unparsable, or for an event that does not exist.',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});

export const duplicateDeliveryMessages = new Counter({
  name: 'callback_duplicate_messages_total',
  help: 'Messages for a delivery already settled (an ack lost to a crash or an outage), dropped unsent.',
  registers: [metricsRegistry],
});

export const callbacksInFlight = new Gauge({
  name: 'callback_in_flight',
  help: 'Callbacks being delivered now (claimed, sent, not yet recorded). The Helm chart scales callback-svc on it.',
  registers: [metricsRegistry],
});

export const callbacksThrottled = new Counter({
  name: 'callback_throttled_total',
  help: 'Messages handed to a throttle queue (not an attempt): over_share (the merchant used its share of capacity), claimed_elsewhere (another copy holds the attempt).',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});

export const sweptDeliveries = new Counter({
  name: 'callback_swept_deliveries_total',
  help: 'Pending or retrying deliveries published again by the sweeper because nothing had been seen of them (a parked or lost message).',
  registers: [metricsRegistry],
});
