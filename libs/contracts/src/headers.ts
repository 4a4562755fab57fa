/** Header names shared by the services; lower-case, as Node exposes them. */
export const HEADER_API_TOKEN = 'serviceapitoken';
export const HEADER_MERCHANT_ID = 'x-merchant-id';
export const HEADER_REQUEST_ID = 'x-request-id';
export const HEADER_ADMIN_TOKEN = 'x-admin-token';
export const HEADER_IDEMPOTENT_REPLAYED = 'idempotent-replayed';
