/** GET /ui (the interactive page) and GET /ui/assets/:name (its script and stylesheet); no token needed. */
import { notFound } from '@dw/http-kit';
import type { FastifyInstance } from 'fastify';
import type { Assets } from '../assets';
import { renderAppPage } from '../html/app-page';
import { sendHtml } from '../security-headers';

export function pageRoutes(app: FastifyInstance, assets: Assets): void {
  // Rendered once: it holds no data, only links to the current asset versions.
  const page = renderAppPage(assets);
  app.get('/ui', async (_request, reply) => sendHtml(reply, 200, page, 'no-cache'));

  app.get<{ Params: { name: string }; Querystring: { v?: string } }>('/ui/assets/:name', async (request, reply) => {
    const asset = assets.get(request.params.name);
    if (!asset) throw notFound('No such asset.');
    // A URL carrying the current hash never changes content; any other URL must revalidate.
    const current = asset.href.endsWith(`?v=${request.query.v ?? ''}`);
    reply.headers({
      'content-type': asset.contentType,
      'cache-control': current ? 'public, max-age=31536000, immutable' : 'no-cache',
      etag: asset.etag,
      'x-content-type-options': 'nosniff',
    });
    if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    return reply.send(asset.body);
  });
}
