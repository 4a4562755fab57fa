import { CallbackUrls, Problem, UpdateCallbackUrlBody, type TransactionTypeName } from '@dw/contracts';
import { notFound, validationFailed } from '@dw/http-kit';
import { checkCallbackUrl } from '@dw/url-guard';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { getCallbackUrls, setCallbackUrl } from '../domain/merchants-repo';

export function callbackUrlRoutes(app: FastifyInstance, db: pg.Pool, allowPrivateHosts: boolean): void {
  const response = { 200: CallbackUrls, '4xx': Problem };

  app.get('/api/getCallbackUrls', { schema: { response } }, async (request) => {
    return (await getCallbackUrls(db, request.merchantId)) ?? Promise.reject(notFound('Merchant not found.'));
  });

  const update = (path: string, type: TransactionTypeName) =>
    app.put<{ Body: UpdateCallbackUrlBody }>(path, { schema: { body: UpdateCallbackUrlBody, response } }, async (request) => {
      const { url } = request.body;
      if (url !== null) {
        const checked = await checkCallbackUrl(url, { allowPrivateHosts });
        // url-guard's reasons name the url ("url must use http or https"); the error names it by its path.
        if (!checked.ok) throw validationFailed([{ path: '/url', message: checked.reason.replace(/^url /, '') }]);
      }
      return (await setCallbackUrl(db, request.merchantId, type, url)) ?? Promise.reject(notFound('Merchant not found.'));
    });

  update('/api/updateCallbackUrlDeposit', 'deposit');
  update('/api/updateCallbackUrlWithdraw', 'withdraw');
}
