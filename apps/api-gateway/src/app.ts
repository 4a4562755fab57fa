/** Builds the gateway: auth + rate limit + validation + forwarding, OpenAPI and /docs. */
import { BalanceHistoryPage, BalanceHistoryQuery, BalanceList, EndpointHealth, Problem, TransactionDetail, TransactionPage, ViewTransactionQuery } from '@dw/contracts';
import { createService, negotiate, type InternalAuth, type ListenerSettings } from '@dw/http-kit';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import { authenticate } from './auth/authenticate';
import { BadTokenLimit } from './auth/bad-token-limit';
import { limitPublicPages } from './auth/public-page-limit';
import { DEFAULT_CONNECTION_LIMITS, limitConnections } from './connection-limit';
import { TokenBuckets } from './auth/token-bucket';
import type { RateLimiter } from './auth/rate-limiter';
import type { TokenResolver } from './auth/token-resolver';
import { forward, forwardTo, pacedForward } from './forwarding';
import { DEFAULT_VIEW_BYTES_PER_SECOND, MerchantPace } from './merchant-pace';
import { DEFAULT_MERCHANT_CONCURRENCY, DEFAULT_PAGE_CONCURRENCY, MerchantConcurrency, type MerchantConcurrencyOptions } from './merchant-concurrency';
import { registerOpenApi } from './openapi';
import { refuseUndeclaredQuery } from './routes/declared-query';
import { neverStored } from './routes/never-stored';
import { publicApiRoutes } from './routes/public-api';
import { UPSTREAM_CONNECTIONS, upstreamAlive, type Upstream } from './upstreams';

export interface GatewayDeps {
  logger: FastifyBaseLogger;
  resolver: TokenResolver;
  /** The per-token limit (in memory, or shared through Redis). */
  limiter: RateLimiter;
  badTokenLimitPerMinute: number;
  /** Requests to the token-less pages per client address a minute (PUBLIC_LIMIT_PER_MINUTE). */
  publicLimitPerMinute: number;
  /** Signs every forwarded request and token lookup: the internal services believe nothing else. */
  internalAuth: InternalAuth;
  /** Proxies in front whose X-Forwarded-For gives the client address (0: the peer is the client). */
  trustProxyHops?: number;
  /** GATEWAY_CONNECTIONS_PER_ADDRESS and GATEWAY_MAX_CONNECTIONS (connection-limit.ts; defaults when omitted). */
  connections?: { perAddress: number; max: number };
  transactions: Upstream;
  ui: Upstream;
  /**
   * Each merchant's share of each upstream (merchant-concurrency.ts): `perMerchant`
   * (GATEWAY_MERCHANT_CONCURRENCY, 16), `maxWaiting` (the rate limit's burst, 100), `waitMs`
   * (UPSTREAM_TIMEOUT_MS, 10 s), `connections` (the pools', UPSTREAM_CONNECTIONS); defaults when omitted.
   * Lending beyond the share is the upstream's own: transactions-svc lends, the ui does not.
   */
  merchantShares?: Partial<Omit<MerchantConcurrencyOptions, 'upstream' | 'lendBeyondShare'>>;
  /**
   * A merchant's list pages in progress at once through the ui (GATEWAY_MERCHANT_PAGE_CONCURRENCY,
   * 1), a share of their own inside the ui's: see `isListPage`.
   */
  pagesPerMerchant?: number;
  /** A merchant's viewer answers' bytes a second through this gateway (GATEWAY_MERCHANT_VIEW_BYTES_PER_SECOND): merchant-pace.ts. */
  viewBytesPerSecond?: number;
  /** METRICS_PORT and CLIENT_STALL_TIMEOUT_MS (defaults when omitted). */
  listener?: ListenerSettings;
}

export async function buildApp(deps: GatewayDeps): Promise<FastifyInstance> {
  const app = createService({
    ...deps.listener,
    logger: deps.logger,
    // The merchant API needs transactions-svc only: while ui is down the API stays ready and /ui
    // routes answer 503 (forwarding.ts), so an outage of the pages never takes the API out of service.
    readiness: { 'transactions-svc': () => upstreamAlive(deps.transactions) },
    trustProxy: deps.trustProxyHops ?? 0,
  });
  app.decorateRequest('merchantId', '');
  app.decorate('internalAuth', deps.internalAuth);
  const badTokens = new BadTokenLimit(deps.badTokenLimitPerMinute);
  const auth = { resolver: deps.resolver, limiter: deps.limiter, badTokens };
  const publicPages = TokenBuckets.perMinute(deps.publicLimitPerMinute);
  const viewerPace = new MerchantPace(deps.viewBytesPerSecond ?? DEFAULT_VIEW_BYTES_PER_SECOND);
  const viewerForward = pacedForward(viewerPace);
  const sweep = setInterval(() => {
    deps.limiter.sweep();
    badTokens.sweep();
    publicPages.sweep();
    viewerPace.sweep();
  }, 10_000).unref();
  app.addHook('onClose', async () => {
    clearInterval(sweep);
    await Promise.all([deps.transactions.pool.close(), deps.ui.pool.close()]);
  });

  limitConnections(app, { ...DEFAULT_CONNECTION_LIMITS, ...deps.connections, trustProxyHops: deps.trustProxyHops ?? 0 });
  limitPublicPages(app, publicPages);
  await registerOpenApi(app);

  // One share per upstream: a merchant stalling its /ui answers keeps its API requests, and the reverse.
  const shares = (upstream: string, lendBeyondShare: boolean, own: Partial<MerchantConcurrencyOptions> = {}) =>
    new MerchantConcurrency({
      upstream,
      lendBeyondShare,
      perMerchant: DEFAULT_MERCHANT_CONCURRENCY,
      maxWaiting: 100,
      waitMs: 10_000,
      connections: UPSTREAM_CONNECTIONS,
      ...deps.merchantShares,
      ...own,
    });
  const toTransactions = shares('transactions-svc', true);
  const toUi = shares('ui', false);
  const toUiListPages = shares('ui-list-pages', false, {
    perMerchant: deps.pagesPerMerchant ?? DEFAULT_PAGE_CONCURRENCY,
    counted: 'list pages',
  });

  await app.register(async (merchantApi) => {
    await forwardTo(merchantApi, deps.transactions, toTransactions);
    neverStored(merchantApi);
    authenticate(merchantApi, auth);
    refuseUndeclaredQuery(merchantApi);
    publicApiRoutes(merchantApi);
  });

  await app.register(async (viewer) => {
    await forwardTo(viewer, deps.ui, (request) => (isListPage(request) ? toUiListPages : toUi));
    neverStored(viewer);
    authenticate(viewer, auth);
    refuseUndeclaredQuery(viewer);
    viewer.get(
      '/ui/viewTransaction',
      {
        schema: {
          summary: 'List transactions (filters, cursor) or view one with its callback attempts',
          description:
            'Accept: application/json gives JSON; Accept: text/html renders a page; Accept: text/csv streams every ' +
            'transaction matching the filters (no paging, up to 100,000 rows) as RFC 4180 CSV for reconciliation.',
          tags: ['merchant'],
          querystring: ViewTransactionQuery,
          response: {
            200: {
              description: 'The list or one transaction; the export as CSV',
              content: {
                'application/json': { schema: { oneOf: [TransactionPage, TransactionDetail] } },
                'text/html': { schema: { type: 'string' } },
                'text/csv': { schema: { type: 'string', description: 'RFC 4180, header row, one row per matching transaction' } },
              },
            },
            404: Problem,
            '4xx': Problem,
          },
        },
      },
      viewerForward,
    );
    viewer.get(
      '/ui/endpointHealth',
      {
        schema: {
          summary: 'Health of the callback endpoints over the last 24 hours',
          description: 'Accept: application/json gives JSON; Accept: text/html renders a page.',
          tags: ['merchant'],
          response: { 200: jsonOrPage(EndpointHealth, 'The health of both endpoints'), '4xx': Problem },
        },
      },
      viewerForward,
    );
    viewer.get(
      '/ui/balances',
      {
        schema: {
          summary: 'The balance per currency, for the viewer',
          description: 'Accept: text/html renders a page; otherwise the JSON of GET /api/getBalance.',
          tags: ['merchant'],
          response: { 200: jsonOrPage(BalanceList, 'The balances'), '4xx': Problem },
        },
      },
      viewerForward,
    );
    viewer.get(
      '/ui/statement',
      {
        schema: {
          summary: 'A page of ledger entries (the statement), for the viewer',
          description:
            'Accept: text/html renders a page; otherwise the JSON of GET /api/getBalanceHistory. Its CSV is ' +
            'GET /api/getBalanceHistory with Accept: text/csv.',
          tags: ['merchant'],
          querystring: BalanceHistoryQuery,
          response: { 200: jsonOrPage(BalanceHistoryPage, 'A page of entries'), '4xx': Problem },
        },
      },
      viewerForward,
    );
  });

  // The interactive page and its assets need no token: the page asks the merchant for it.
  await app.register(async (pages) => {
    await forwardTo(pages, deps.ui, toUi);
    const hide = { schema: { hide: true } };
    pages.get('/ui', hide, forward);
    // The address with a slash, as people type it and some links end: the page itself (the query kept).
    pages.get('/ui/', hide, (request, reply) => {
      const query = request.url.indexOf('?');
      return reply.redirect(query < 0 ? '/ui' : `/ui${request.url.slice(query)}`, 301);
    });
    pages.get('/ui/assets/*', hide, forward);
  });

  return app;
}

/** A viewer's answer as published: the JSON of `schema`, or with Accept: text/html the page rendered from it. */
function jsonOrPage(schema: unknown, description: string) {
  return { description: `${description}; with Accept: text/html, a page`, content: { 'application/json': { schema }, 'text/html': { schema: { type: 'string' } } } };
}

/**
 * A page of the merchant's list (`GET /ui/viewTransaction` without `id`, as JSON or HTML): up to
 * 100 of its largest rows, megabytes to build in transactions-svc, pass on in the ui and here, and
 * render. Sixteen of them at once from one merchant, each within its rate limit, kept every core
 * busy and made another merchant's creates wait 433–461 ms at the median (6–7 ms alone); one page
 * at a time, 9–12 ms (docs/decisions.md, "Bounded requests"). Paging by cursor is one page at a time
 * anyway, as is the viewer. The CSV export has its own bounds in transactions-svc (two downloads per
 * merchant), and one transaction with `id` is small.
 */
export function isListPage(request: FastifyRequest): boolean {
  const query = request.query as { id?: unknown };
  return request.routeOptions.url === '/ui/viewTransaction' && query.id === undefined && negotiate(request.headers.accept) !== 'csv';
}

