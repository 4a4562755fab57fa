/**
 * The relay's Prometheus metrics, in the process registry served by `GET /metrics`. Module-level
 * because a registry refuses a second metric of the same name; several relays in one process (as
 * in tests) add to the same series.
 */
import { metricsRegistry } from '@dw/telemetry';
import { Counter, Gauge } from 'prom-client';

export const outboxPublished = new Counter({
  name: 'outbox_published_total',
  help: 'Outbox rows published to RabbitMQ and confirmed by the broker.',
  registers: [metricsRegistry],
});

export const outboxPassFailures = new Counter({
  name: 'outbox_publish_failures_total',
  help: 'Relay passes that failed (broker or database error); their rows stay pending and are retried.',
  registers: [metricsRegistry],
});

/** Grows while RabbitMQ is down: the alert to set is on this, not on the failure count. */
export const outboxLag = new Gauge({
  name: 'outbox_lag_seconds',
  help: 'Age of the oldest outbox row not yet published (0 when none is pending), as of the last check.',
  registers: [metricsRegistry],
});
