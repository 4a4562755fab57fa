/**
 * The sender's timeout is CALLBACK_TIMEOUT_MS and nothing shorter (docs/callbacks.md: the service waits up
 * to that long for a reply). undici has header and body timers of its own on a coarse clock (ticks
 * of 499 ms): set to the same value, they fired up to a tick early and reported a network error, so
 * a reply arriving just in time was lost. Each send here starts at another point of that clock.
 */
import net from 'node:net';
import { startCallbackReceiver, type CallbackReceiver } from '@dw/testing';
import { createCallbackSender, SendAbortedError, type CallbackSender } from '../src/delivery';
import { eventually } from './support/fixtures';

/** Just under three of undici's ticks: its own timer, started within a tick, fired ~250 ms early. */
const TIMEOUT_MS = 1_497;

let receiver: CallbackReceiver;
let sender: CallbackSender;

beforeAll(async () => {
  receiver = await startCallbackReceiver();
  sender = createCallbackSender({ timeoutMs: TIMEOUT_MS, allowPrivateHosts: true });
});
afterAll(async () => {
  await sender?.close();
  await receiver?.close();
});

const sendTo = (path: string, eventId: string) =>
  sender.send({ url: `${receiver.url}${path}`, eventId, body: Buffer.from('{}'), signingSecrets: ['whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0'] });
const staggered = <T>(count: number, stepMs: number, start: (i: number) => Promise<T>) =>
  Promise.all(Array.from({ length: count }, (_, i) => new Promise<T>((resolve, reject) => setTimeout(() => start(i).then(resolve, reject), i * stepMs))));

it('waits the whole CALLBACK_TIMEOUT_MS for headers that never come, then reports a timeout with no status', async () => {
  receiver.respond = () => 'hang';
  const results = await staggered(4, 120, (i) => sendTo('/hang', `evt_hang_${i}`));
  for (const r of results) {
    expect(r).toMatchObject({ outcome: 'timeout', statusCode: null, error: `timeout: no reply within ${TIMEOUT_MS} ms` });
    expect(r.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 1);
  }
});

it('waits the whole CALLBACK_TIMEOUT_MS for a body that stalls, then reports a timeout with the status seen', async () => {
  receiver.respond = () => 'stall-body';
  const results = await staggered(4, 120, (i) => sendTo('/stall', `evt_stall_${i}`));
  for (const r of results) {
    expect(r).toMatchObject({ outcome: 'timeout', statusCode: 200, error: `timeout: the reply body did not complete within ${TIMEOUT_MS} ms` });
    expect(r.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 1);
  }
});

it('judges a reply that is not a 200 by its status once its body has taken a second, rather than holding the attempt to the timeout', async () => {
  const patient = createCallbackSender({ timeoutMs: 10_000, allowPrivateHosts: true });
  receiver.respond = () => ({ status: 500, stallBody: true });
  try {
    const results = await staggered(3, 100, (i) =>
      patient.send({ url: `${receiver.url}/stall-500`, eventId: `evt_stall500_${i}`, body: Buffer.from('{}'), signingSecrets: ['whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0'] }),
    );
    for (const r of results) {
      expect(r).toMatchObject({ outcome: 'http_status', statusCode: 500, error: null });
      expect(r.durationMs).toBeGreaterThanOrEqual(1_000);
      expect(r.durationMs).toBeLessThan(3_000);
    }
  } finally {
    await patient.close();
  }
});

it('takes a reply that arrives shortly before CALLBACK_TIMEOUT_MS', async () => {
  receiver.respond = () => ({ status: 200, afterMs: TIMEOUT_MS - 300 });
  const results = await staggered(6, 80, (i) => sendTo('/late', `evt_late_${i}`));
  for (const r of results) expect(r).toMatchObject({ outcome: 'succeeded', statusCode: 200, error: null });
});

/**
 * abortAll() (SIGTERM): a send whose request was written reached the merchant, or may have, so it is
 * an attempt; one still connecting wrote nothing and is not (docs/callbacks.md: every attempt is recorded).
 */
describe('abortAll', () => {
  /** A sender of its own: abortAll() refuses every later send. The timeout is far off, so only the abort ends a send. */
  async function withAbortingSender(run: (aborting: CallbackSender) => Promise<void>) {
    const aborting = createCallbackSender({ timeoutMs: 60_000, allowPrivateHosts: true });
    try {
      await run(aborting);
    } finally {
      await aborting.close();
    }
  }
  const request = (url: string, eventId: string) => ({ url, eventId, body: Buffer.from('{}'), signingSecrets: ['whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0'] });
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('makes a send whose request reached the endpoint an aborted attempt: no status, an error saying we stopped, its real duration', () =>
    withAbortingSender(async (aborting) => {
      receiver.respond = () => 'hang';
      const sending = aborting.send(request(`${receiver.url}/aborted`, 'evt_aborted'));
      await receiver.waitFor(1, (r) => r.path === '/aborted');
      await sleep(300);
      aborting.abortAll();
      const result = await sending;
      expect(result).toMatchObject({ outcome: 'aborted', statusCode: null });
      expect(result.error).toBe(`aborted: callback-svc stopped before a reply (after ${result.durationMs} ms)`);
      expect(result.durationMs).toBeGreaterThanOrEqual(300);
    }));

  it('keeps the status of a reply whose body had not completed', () =>
    withAbortingSender(async (aborting) => {
      receiver.respond = () => 'stall-body';
      const sending = aborting.send(request(`${receiver.url}/aborted-body`, 'evt_aborted_body'));
      await receiver.waitFor(1, (r) => r.path === '/aborted-body');
      await sleep(200);
      aborting.abortAll();
      const result = await sending;
      expect(result).toMatchObject({ outcome: 'aborted', statusCode: 200 });
      expect(result.error).toBe(`aborted: callback-svc stopped before the reply body completed (after ${result.durationMs} ms)`);
    }));

  it('rejects with SendAbortedError a send still connecting (its TLS handshake unanswered): not a byte of the request was written', async () => {
    // A TCP server that takes the connection and never answers the ClientHello.
    const bytes: Buffer[] = [];
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => {
      sockets.push(socket);
      socket.on('data', (chunk: Buffer) => bytes.push(chunk)).on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      await withAbortingSender(async (aborting) => {
        const { port } = silent.address() as net.AddressInfo;
        const sending = aborting.send(request(`https://127.0.0.1:${port}/tls`, 'evt_connecting'));
        await eventually(async () => bytes.length > 0, 5_000, 20);
        aborting.abortAll();
        await expect(sending).rejects.toBeInstanceOf(SendAbortedError);
        await sleep(100);
        const seen = Buffer.concat(bytes);
        expect(seen[0]).toBe(0x16); // a TLS handshake record: the ClientHello, nothing after it
        expect(seen.includes('POST')).toBe(false);
        await expect(aborting.send(request(`${receiver.url}/after`, 'evt_after'))).rejects.toBeInstanceOf(SendAbortedError);
        // Closing does not wait for the connection still in its handshake (until the connect timeout, a minute here).
        const closing = Date.now();
        await aborting.close();
        expect(Date.now() - closing).toBeLessThan(1_000);
      });
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
