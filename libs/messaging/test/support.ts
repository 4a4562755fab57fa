/** Test support: a private prefix per test file, a raw admin connection, cleanup and a broker-side kill switch. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { testPrefix } from '@dw/testing';
import { connect, type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { deleteTopology, type MessagingLogger, type Topology } from '../src';

export const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

export const uniquePrefix = (label: string) => testPrefix(label);

/** A logger that remembers what it was told, so tests can check that state changes are logged. */
export function recordingLogger(): MessagingLogger & { lines: Array<{ level: string; msg: string }> } {
  const lines: Array<{ level: string; msg: string }> = [];
  const at = (level: string) => (_obj: object, msg: string) => void lines.push({ level, msg });
  return { lines, info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') };
}

export async function openAdmin(): Promise<{ connection: ChannelModel; channel: Channel }> {
  const connection = await connect(AMQP_URL, { clientProperties: { connection_name: 'messaging-test-admin' } });
  connection.on('error', () => undefined);
  return { connection, channel: await connection.createChannel() };
}

/** Deletes what a test declared (deleting is idempotent: missing names are fine). */
export async function deleteAll(topology: Topology): Promise<void> {
  const { connection, channel } = await openAdmin();
  try {
    await deleteTopology(channel, topology);
  } finally {
    await connection.close();
  }
}

/** Collects messages consumed (and acked) from a queue on the admin channel. */
export async function collect(channel: Channel, queue: string): Promise<{ messages: Array<{ at: number; msg: ConsumeMessage }>; tag: string }> {
  const messages: Array<{ at: number; msg: ConsumeMessage }> = [];
  const { consumerTag } = await channel.consume(queue, (msg) => {
    if (!msg) return;
    messages.push({ at: Date.now(), msg });
    channel.ack(msg);
  });
  return { messages, tag: consumerTag };
}

export async function waitUntil(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const run = promisify(execFile);

/**
 * Closes, from the broker's side, only the connection(s) whose client-provided connection_name is
 * `name`: other people's connections on this broker are left alone.
 */
export async function forceCloseConnection(name: string): Promise<number> {
  const { stdout } = await run('rabbitmqctl', ['list_connections', 'pid', 'client_properties', '-q']);
  const marker = `{"connection_name","${name}"}`;
  const pids = stdout
    .split('\n')
    .filter((line) => line.includes(marker))
    .map((line) => line.split('\t')[0]!);
  for (const pid of pids) await run('rabbitmqctl', ['close_connection', pid, 'messaging test: forced close']);
  return pids.length;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
