/**
 * A cursor this API did not issue is a 400 naming it, on the pages and on the downloads alike:
 * the downloads are never paged and do not apply a cursor, but refuse a bad one as they refuse a
 * bad `limit`, rather than ignore what the merchant sent (found by an outside audit).
 */
import { validationFailed } from '@dw/http-kit';

export const badCursor = () => validationFailed([{ path: 'querystring:/cursor', message: 'is not a cursor this API issued' }]);
