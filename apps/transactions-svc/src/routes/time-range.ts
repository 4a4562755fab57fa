/**
 * `from` (inclusive) and `to` (exclusive) on the lists, the export and the statement: a `to` not
 * later than `from` is a window nothing can fall in, so it is refused as recoverCallbacks refuses
 * `until` not later than `since` (400 naming `to`), rather than answered with an empty page that
 * reads as "no transactions" (found by an outside audit).
 */
import { validationFailed } from '@dw/http-kit';

/** Whether [start, end) holds no instant (offsets compared as instants): here and in recoverCallbacks. */
export const isEmptyWindow = (start: string, end: string): boolean => Date.parse(end) <= Date.parse(start);

export function refuseEmptyWindow(query: { from?: string; to?: string }): void {
  if (query.from === undefined || query.to === undefined) return;
  if (isEmptyWindow(query.from, query.to)) {
    throw validationFailed([{ path: 'querystring:/to', message: 'must be later than from' }]);
  }
}
