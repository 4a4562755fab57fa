/**
 * Issue 20's bare forwarding proxy (argv[2]: upstream origin): Fastify and @fastify/reply-from, the
 * gateway's forwarding library at the gateway's version, forwarding /api/* and nothing else: no
 * token, no rate limit, no proof, no logging.
 */
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import replyFrom from '@fastify/reply-from';

const app = Fastify({ logger: false });
app.register(replyFrom, { base: process.argv[2], disableRequestLogging: true });
app.register(async (scope) => {
  scope.all('/api/*', (req, reply) => reply.from(req.url));
});

process.on('disconnect', () => process.exit(0));
app.listen({ host: '127.0.0.1', port: 0 }).then(() => {
  process.send!({ url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` });
});
