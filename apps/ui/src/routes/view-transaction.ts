/**
 * GET /ui/viewTransaction: one transaction (`id`) or a filtered page of them, read from
 * transactions-svc for the merchant the gateway authenticated, as JSON or as an HTML page
 * depending on Accept. transactions-svc's own errors pass through with their status and body.
 */
import { PROBLEM_CONTENT_TYPE, ViewTransactionQuery, type Problem } from '@dw/contracts';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Assets } from '../assets';
import { CSV_CONTENT_TYPE, transactionsCsv } from '../csv/transactions-csv';
import { wantsFragment } from '../fragment';
import { detailControls, detailFragment, renderDetailPage } from '../html/detail-page';
import { listControls, listFragment, renderListPage } from '../html/list-page';
import { HEADER_UI_TRAIL, readTrail } from '../html/pager';
import { sendHtml } from '../security-headers';
import type { TransactionsClient, UpstreamResult } from '../transactions-client';
import { ApiError, negotiate, pointerToken, requireMerchant, validationFailed, type InternalAuth } from '@dw/http-kit';

// Merchant data: never stored by a browser or a shared cache, and it differs by Accept.
const NO_STORE = 'no-store';

/**
 * The export is a list (every matching transaction); one transaction has no CSV of its own.
 * 400 rather than JSON in place of the CSV asked for; not 406, as the contract's errors
 * (docs/api.md#errors) give validation_failed the status 400. The offending part is the query's id,
 * so it is named as a field, as validation_failed promises.
 */
const CSV_IS_FOR_LISTS = () =>
  new ApiError(400, 'validation_failed', 'CSV is for lists; drop id or ask for application/json.', [
    { path: 'querystring:/id', message: 'must be absent with Accept: text/csv (CSV is for lists)' },
  ]);

/**
 * `id` asks for one transaction; the list's parameters beside it would be dropped in silence
 * (`?id=…&type=withdraw` answered a deposit), so each one given is named, as an unknown one is.
 * The names are read from the URL, not from request.query: by the handler, validation has given
 * `limit` its default there, and a limit the merchant never sent must not be named.
 */
function listParametersBesideId(url: string): ApiError | undefined {
  const names = [...new URLSearchParams(url.slice(url.indexOf('?') + 1)).keys()].filter((name) => name !== 'id');
  if (names.length === 0) return undefined;
  return validationFailed([...new Set(names)].map((name) => ({ path: `querystring:/${pointerToken(name)}`, message: 'must be absent with id (id asks for one transaction)' })));
}

/** transactions-svc's problem as it answered it; a 429's Retry-After (too many exports at once) goes with it. */
function passProblem(reply: FastifyReply, status: number, problem: Problem, retryAfter?: string): FastifyReply {
  if (retryAfter !== undefined) reply.header('retry-after', retryAfter);
  return reply.code(status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
}

/** JSON as transactions-svc wrote it (TransactionsClient.listBytes, getBytes), or its problem. */
function sendJson(reply: FastifyReply, result: UpstreamResult<Buffer>): FastifyReply {
  if (!result.ok) return passProblem(reply, result.status, result.problem);
  return reply.type('application/json; charset=utf-8').send(result.body);
}

export function viewTransactionRoutes(app: FastifyInstance, client: TransactionsClient, assets: Assets, auth: InternalAuth): void {
  app.addHook('onRequest', async (_request, reply) => {
    reply.headers({ vary: `Accept, x-ui-fragment, ${HEADER_UI_TRAIL}`, 'cache-control': NO_STORE });
  });
  requireMerchant(app, auth);

  app.get<{ Querystring: ViewTransactionQuery }>(
    '/ui/viewTransaction',
    { schema: { querystring: ViewTransactionQuery } },
    async (request, reply) => {
      const as = negotiate(request.headers.accept);
      const scope = { merchantId: request.merchantId, requestId: String(request.id) };
      const { id, ...filters } = request.query;

      if (id !== undefined) {
        const mixed = listParametersBesideId(request.raw.url ?? '');
        if (mixed) throw mixed;
        if (as === 'csv') throw CSV_IS_FOR_LISTS();
        if (as === 'json') return sendJson(reply, await client.getBytes(scope, id));
        const result = await client.get(scope, id);
        if (!result.ok) return passProblem(reply, result.status, result.problem);
        const body = wantsFragment(request)
          ? `${detailFragment(result.body).value}\n${detailControls(result.body).value}`
          : renderDetailPage(assets, result.body);
        return sendHtml(reply, 200, body, NO_STORE);
      }

      if (as === 'csv') {
        // The export is never paged: limit and cursor do not apply (docs/api.md#viewing-transactions);
        // the cursor goes along so that transactions-svc refuses one it did not issue.
        const { limit: _limit, ...exportFilters } = filters;
        const rows = await client.exportRows(scope, exportFilters);
        if (!rows.ok) return passProblem(reply, rows.status, rows.problem, rows.retryAfter);
        return reply
          .type(CSV_CONTENT_TYPE)
          .header('content-disposition', 'attachment; filename="transactions.csv"')
          .send(transactionsCsv(rows.body));
      }

      if (as === 'json') return sendJson(reply, await client.listBytes(scope, filters));
      const result = await client.list(scope, filters);
      if (!result.ok) return passProblem(reply, result.status, result.problem);
      const body = wantsFragment(request)
        ? `${listFragment(result.body, filters).value}\n${listControls(result.body, filters, readTrail(request.headers[HEADER_UI_TRAIL])).value}`
        : renderListPage(assets, result.body, filters);
      return sendHtml(reply, 200, body, NO_STORE);
    },
  );
}
