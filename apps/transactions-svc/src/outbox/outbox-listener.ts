/**
 * The relay's doorbell: a dedicated PostgreSQL session that `LISTEN outbox` (the outbox trigger
 * notifies once per INSERT statement, delivered at commit). A LISTEN lives and dies with its
 * session, so when PostgreSQL drops it (restart, failover, idle kill) we connect again with
 * backoff, and ring once after each (re)connect: notifications sent during the gap are lost.
 * The relay's poll covers whatever slips through anyway; this only makes the usual case fast.
 */
import type { MessagingLogger } from '@dw/messaging';
import pg from 'pg';

export const OUTBOX_CHANNEL = 'outbox';
/** Shown in pg_stat_activity, so an operator (or a test) can find the listening session. */
export const LISTENER_APPLICATION_NAME = 'dw-outbox-listener';

export interface OutboxListener {
  stop(): Promise<void>;
}

const MIN_RETRY_MS = 250;
const MAX_RETRY_MS = 10_000;

export function listenForOutbox(databaseUrl: string, onNotify: () => void, logger: MessagingLogger): OutboxListener {
  let stopped = false;
  let client: pg.Client | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let failures = 0;

  const scheduleReconnect = () => {
    if (stopped || retryTimer) return;
    const delay = Math.min(MAX_RETRY_MS, MIN_RETRY_MS * 2 ** failures++);
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void connect();
    }, delay);
  };

  const connect = async () => {
    const c = new pg.Client({ connectionString: databaseUrl, application_name: LISTENER_APPLICATION_NAME, connectionTimeoutMillis: 5000 });
    client = c;
    // Both fire when the session goes away; without an 'error' listener pg would crash the process.
    c.on('error', (err) => logger.warn({ err: { message: err.message } }, 'outbox listener lost its PostgreSQL session'));
    c.on('end', () => {
      if (client === c) client = undefined;
      scheduleReconnect();
    });
    c.on('notification', (msg) => {
      if (msg.channel === OUTBOX_CHANNEL) onNotify();
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${OUTBOX_CHANNEL}`);
      if (failures > 0) logger.info({}, 'outbox listener reconnected to PostgreSQL');
      failures = 0;
      onNotify();
    } catch (err) {
      if (!stopped) logger.warn({ err: { message: (err as Error).message } }, 'outbox listener cannot LISTEN; retrying');
      await c.end().catch(() => undefined);
      scheduleReconnect();
    }
    if (stopped) await c.end().catch(() => undefined);
  };

  void connect();
  return {
    async stop() {
      stopped = true;
      clearTimeout(retryTimer);
      await client?.end().catch(() => undefined);
    },
  };
}
