/**
 * Starts a built service and stops it gracefully: on SIGTERM/SIGINT the server stops taking new
 * requests, finishes the ones in flight, runs the service's own close hooks (consumers hand back
 * unacked messages), flushes telemetry and exits 0.
 */
import { shutdownTelemetry } from '@dw/telemetry';
import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';

export interface RunOptions {
  app: FastifyInstance;
  port: number;
  host: string;
  shutdownTimeoutMs: number;
}

export async function runService({ app, port, host, shutdownTimeoutMs }: RunOptions): Promise<void> {
  closeWithGrace({ delay: shutdownTimeoutMs }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    else app.log.info({ signal }, 'shutting down');
    await app.close();
    await shutdownTelemetry();
  });
  await app.listen({ port, host });
}
