/**
 * GET /ui/balances (the balance per currency) and GET /ui/statement (a page of ledger entries),
 * read from transactions-svc for the merchant the gateway authenticated: HTML for the viewer (a
 * fragment for /ui's script, a page otherwise), the upstream JSON for anyone else. The statement's
 * CSV is transactions-svc's own, fetched by the page through GET /api/getBalanceHistory.
 */
import { BalanceHistoryQuery, PROBLEM_CONTENT_TYPE } from '@dw/contracts';
import { ApiError, negotiate } from '@dw/http-kit';
import type { FastifyInstance } from 'fastify';
import type { Assets } from '../assets';
import { wantsFragment } from '../fragment';
import { balancesFragment, renderBalancesPage } from '../html/balances-page';
import { HEADER_UI_TRAIL, readTrail } from '../html/pager';
import { renderStatementPage, statementControls, statementFragment } from '../html/statement-page';
import { sendHtml } from '../security-headers';
import type { TransactionsClient } from '../transactions-client';

/**
 * 400 rather than JSON in place of the CSV asked for: the statement's CSV has its own address. Not
 * 406: the contract's errors (docs/api.md#errors) give validation_failed the status 400, and this
 * is a request to fix, with the part to fix named.
 */
const CSV_ELSEWHERE = () =>
  new ApiError(400, 'validation_failed', 'The statement as CSV is GET /api/getBalanceHistory with Accept: text/csv.', [
    { path: 'headers:/accept', message: 'must not ask for text/csv here: use GET /api/getBalanceHistory' },
  ]);

/** Registered in the scope of viewTransactionRoutes, whose hooks (merchant, no-store) apply. */
export function balanceRoutes(app: FastifyInstance, client: TransactionsClient, assets: Assets): void {
  app.get('/ui/balances', async (request, reply) => {
    const result = await client.balances({ merchantId: request.merchantId, requestId: String(request.id) });
    if (!result.ok) return reply.code(result.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(result.problem));
    if (negotiate(request.headers.accept) !== 'html') return reply.send(result.body);
    const body = wantsFragment(request) ? balancesFragment(result.body).value : renderBalancesPage(assets, result.body);
    return sendHtml(reply, 200, body, 'no-store');
  });

  app.get<{ Querystring: BalanceHistoryQuery }>('/ui/statement', { schema: { querystring: BalanceHistoryQuery } }, async (request, reply) => {
    const query = request.query;
    if (negotiate(request.headers.accept) === 'csv') throw CSV_ELSEWHERE();
    const result = await client.balanceHistory({ merchantId: request.merchantId, requestId: String(request.id) }, query);
    if (!result.ok) return reply.code(result.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(result.problem));
    if (negotiate(request.headers.accept) !== 'html') return reply.send(result.body);
    const body = wantsFragment(request)
      ? `${statementFragment(result.body, query).value}\n${statementControls(result.body, query, readTrail(request.headers[HEADER_UI_TRAIL])).value}`
      : renderStatementPage(assets, result.body, query);
    return sendHtml(reply, 200, body, 'no-store');
  });
}
