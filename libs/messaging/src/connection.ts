/**
 * One long-lived RabbitMQ connection per process that survives the broker going away. amqplib's
 * own recovery (`connect(url, { recovery })`) supplies the reconnect loop with capped, jittered
 * backoff; this class adds what a service needs around it: the topology asserted and every setup
 * (consumers, subscriptions) re-run on each connection, a readiness flag, a confirm channel that
 * follows reconnects, and a graceful close that waits for in-flight handlers.
 */
import { connect, type ChannelModel, type ConfirmChannel, type RecoveringChannelModel } from 'amqplib';
import { ConnectionScope, type ConnectedContext, type ConsumeOptions, type MessageHandler } from './connection-scope';
import { redactUrl, type MessagingLogger } from './logger';
import { assertTopology, type Topology } from './topology';

export type SetupFn = (ctx: ConnectedContext) => Promise<void>;

export interface AmqpConnectionOptions {
  url: string;
  /** Shown as connection_name by `rabbitmqctl list_connections` and the management UI. */
  name: string;
  logger: MessagingLogger;
  /** Asserted on every connection, before any setup runs. */
  topology?: Topology;
  /** Backoff between connection attempts: doubles from initialDelayMs up to maxDelayMs. */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number };
  /** Heartbeat in seconds, so a silently dead broker is noticed (default 10). */
  heartbeatSeconds?: number;
  /** Pause before a message whose handler threw goes back to its queue (default 1000). */
  requeueDelayMs?: number;
}

class ConnectionClosedError extends Error {
  constructor() {
    super('the AMQP connection manager is closed');
    this.name = 'ConnectionClosedError';
  }
}

export class AmqpConnection {
  private recovering?: Promise<RecoveringChannelModel | undefined>;
  private scope?: ConnectionScope;
  /** Set up, waiting for amqplib to report the connection (its 'connect' event). */
  private pending?: ConnectionScope;
  private readonly setups: SetupFn[] = [];
  private readonly inflight = new Set<Promise<unknown>>();
  private waiters: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  private closing = false;
  private closed?: Promise<void>;

  constructor(private readonly opts: AmqpConnectionOptions) {}

  /** Runs `setup` on every connection (now too, if connected): consumers re-subscribe after a reconnect. */
  onConnected(setup: SetupFn): void {
    this.setups.push(setup);
    const scope = this.scope;
    if (scope) setup(scope).catch((err) => this.opts.logger.error({ err }, 'AMQP setup failed on the live connection'));
  }

  /** A durable subscription: `handler` resolving acks, throwing hands the message back after a pause. */
  consume(queue: string, handler: MessageHandler, options?: ConsumeOptions): void {
    this.onConnected(async (ctx) => {
      await ctx.consume(queue, handler, options);
    });
  }

  /** Starts connecting and keeps at it; never throws, never rejects: state changes are logged. */
  start(): void {
    if (this.recovering || this.closing) return;
    const { logger, url, name } = this.opts;
    logger.info({ url: redactUrl(url), connection: name }, 'connecting to RabbitMQ');
    this.recovering = connect(this.urlWithHeartbeat(), {
      clientProperties: { connection_name: name },
      recovery: {
        initialDelay: this.opts.reconnect?.initialDelayMs ?? 250,
        maxDelay: this.opts.reconnect?.maxDelayMs ?? 10_000,
        waitForConnect: false,
        setup: (model: ChannelModel) => this.setUp(new ConnectionScope(model, this.hooks())),
      },
    }).then(
      (recovering) => this.watch(recovering),
      (err: unknown) => {
        logger.error({ err }, 'cannot start the AMQP connection');
        return undefined;
      },
    );
  }

  /** True while a connection is up with its topology and setups in place (for /readyz). */
  isConnected(): boolean {
    return this.scope !== undefined && !this.closing;
  }

  /**
   * True while a connection is up, including while close() lets in-flight work finish: a handler
   * that started before the shutdown can still publish (its retry) and have it confirmed.
   */
  canPublish(): boolean {
    return this.scope !== undefined;
  }

  /** Resolves once connected (at once when already up); rejects when the manager closes first. */
  whenConnected(): Promise<void> {
    if (this.closing) return Promise.reject(new ConnectionClosedError());
    if (this.scope) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  /** The connection's confirm channel, recreated after a reconnect or a channel error. */
  async confirmChannel(): Promise<ConfirmChannel> {
    // Loop: the connection may drop again between the wake-up and this line. An open connection
    // serves even while close() drains it (see canPublish); a closing one with none rejects.
    for (;;) {
      if (this.scope) return this.scope.confirmChannel();
      await this.whenConnected();
    }
  }

  /** Work close() must wait for (a handler, a publish); returns the same promise. */
  track<T>(work: Promise<T>): Promise<T> {
    this.inflight.add(work);
    const forget = () => this.inflight.delete(work);
    work.then(forget, forget);
    return work;
  }

  /** Graceful stop: cancel consumers, let in-flight handlers finish (and ack), then close. */
  close(): Promise<void> {
    this.closed ??= this.shutDown();
    return this.closed;
  }

  private async shutDown(): Promise<void> {
    this.closing = true;
    for (const w of this.waiters.splice(0)) w.reject(new ConnectionClosedError());
    await this.scope?.cancelConsumers();
    await Promise.allSettled([...this.inflight]);
    await this.scope?.closeChannels();
    const recovering = await this.recovering;
    await recovering?.close().catch(() => undefined);
    this.scope = undefined;
    this.opts.logger.info({ connection: this.opts.name }, 'RabbitMQ connection closed');
  }

  private hooks() {
    return {
      logger: this.opts.logger,
      isClosing: () => this.closing,
      track: (work: Promise<unknown>) => void this.track(work),
      requeueDelayMs: this.opts.requeueDelayMs ?? 1000,
    };
  }

  // Runs inside amqplib's recovery before it reports the connection: a failure here (a topology
  // mismatch, a missing queue) closes this connection and schedules the next attempt.
  private async setUp(scope: ConnectionScope): Promise<void> {
    if (this.opts.topology) {
      const channel = await scope.createChannel();
      await assertTopology(channel, this.opts.topology);
      await scope.closeChannel(channel);
    }
    for (const setup of this.setups) await setup(scope);
    this.pending = scope;
  }

  private watch(recovering: RecoveringChannelModel): RecoveringChannelModel {
    const { logger, name } = this.opts;
    recovering.on('connect', (model) => {
      if (this.pending?.connection !== model) return;
      this.scope = this.pending;
      this.pending = undefined;
      logger.info({ connection: name }, 'connected to RabbitMQ');
      for (const w of this.waiters.splice(0)) w.resolve();
    });
    recovering.on('disconnect', (err: Error) => {
      this.scope = undefined;
      if (!this.closing) logger.warn({ err: { message: err.message }, connection: name }, 'lost the RabbitMQ connection');
    });
    recovering.on('connect-failed', (err: Error) =>
      logger.warn({ err: { message: err.message }, connection: name }, 'could not connect to RabbitMQ'),
    );
    recovering.on('reconnect-scheduled', ({ attempt, delay }: { attempt: number; delay: number }) =>
      logger.info({ attempt, delayMs: delay, connection: name }, 'reconnecting to RabbitMQ'),
    );
    recovering.on('reconnect-failed', (err: Error) => logger.error({ err, connection: name }, 'gave up reconnecting to RabbitMQ'));
    recovering.on('blocked', (reason: string) => logger.warn({ reason, connection: name }, 'RabbitMQ blocked this connection'));
    recovering.on('unblocked', () => logger.info({ connection: name }, 'RabbitMQ unblocked this connection'));
    // The scope already logs the connection's errors; an emitter without an 'error' listener throws.
    recovering.on('error', () => undefined);
    return recovering;
  }

  private urlWithHeartbeat(): string {
    const url = new URL(this.opts.url);
    if (!url.searchParams.has('heartbeat')) url.searchParams.set('heartbeat', String(this.opts.heartbeatSeconds ?? 10));
    return url.toString();
  }
}
