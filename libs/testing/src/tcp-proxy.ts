/**
 * A TCP proxy a test can cut: services connect to RabbitMQ or PostgreSQL through it, and `cut()`
 * drops every connection and refuses new ones — a broker or database outage as the services see
 * it, without stopping the machine's shared server that other test files are using.
 *
 * `blackHole()` is the nastier outage: a dependency that drops packets (a dead host, a firewall
 * rule, a partition). Connections stay open and new ones are accepted, but no byte gets through
 * either way, so a client without its own timeouts waits for as long as TCP takes to give up.
 */
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** host:port string to put in a connection URL */
  address: string;
  /** Drops every connection and refuses new ones. */
  cut(): void;
  /** Keeps every connection (and accepts new ones) but forwards nothing, either way, from now on. */
  blackHole(): void;
  /** Forwards new connections again; those caught in a black hole are dropped, as TCP eventually would. */
  restore(): void;
  close(): Promise<void>;
}

type Mode = 'forward' | 'refuse' | 'black-hole';

interface Link {
  client: net.Socket;
  upstream?: net.Socket;
  holed: boolean;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const links = new Set<Link>();
  let mode: Mode = 'forward';
  const drop = (link: Link) => {
    link.client.destroy();
    link.upstream?.destroy();
    links.delete(link);
  };
  const server = net.createServer((client) => {
    if (mode === 'refuse') return client.destroy();
    const link: Link = { client, holed: mode === 'black-hole' };
    links.add(link);
    client.on('error', () => drop(link)).on('close', () => drop(link));
    if (link.holed) return void client.resume(); // read and discard; never answer
    const upstream = net.connect(targetPort, targetHost);
    link.upstream = upstream;
    upstream.on('error', () => drop(link)).on('close', () => drop(link));
    client.on('data', (chunk) => link.holed || upstream.write(chunk));
    upstream.on('data', (chunk) => link.holed || client.write(chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  const dropAll = () => {
    for (const link of [...links]) drop(link);
  };
  return {
    port,
    address: `127.0.0.1:${port}`,
    cut() {
      mode = 'refuse';
      dropAll();
    },
    blackHole() {
      mode = 'black-hole';
      for (const link of links) link.holed = true;
    },
    restore() {
      mode = 'forward';
      for (const link of [...links]) if (link.holed) drop(link);
    },
    async close() {
      mode = 'refuse';
      dropAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
