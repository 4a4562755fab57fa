import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { HEADER_REQUEST_ID } from '@dw/contracts';

/** A client's x-request-id is echoed when it is a sane token; otherwise a fresh UUID is used. */
export const SANE_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

export function genReqId(req: IncomingMessage): string {
  const sent = req.headers[HEADER_REQUEST_ID];
  return typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : randomUUID();
}
