/**
 * Opaque keyset cursor for lists ordered newest first by (createdAt, id). New rows land above the
 * cursor, so paging never skips or repeats a row while transactions keep arriving.
 */
import { isContractDateTime } from '@dw/contracts';

/** A cursor this API did not issue (a 400). */
export class BadCursorError extends Error {}

export interface CursorPosition {
  createdAt: string;
  id: string;
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function encodeCursor(pos: CursorPosition): string {
  return Buffer.from(JSON.stringify([pos.createdAt, pos.id])).toString('base64url');
}

/**
 * Whether a cursor's time is one this API could have written: UTC with milliseconds, and a real
 * date by round trip (Date.parse rolls 2026-02-31 over to March 3rd, which PostgreSQL refuses).
 */
export function isCursorTime(value: unknown): value is string {
  return typeof value === 'string' && ISO_MS.test(value) && isContractDateTime(value);
}

/** The position, or undefined when the cursor was not made by encodeCursor. */
export function decodeCursor(cursor: string): CursorPosition | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 2) return undefined;
    const [createdAt, id] = value as unknown[];
    if (!isCursorTime(createdAt)) return undefined;
    if (typeof id !== 'string' || !UUID.test(id)) return undefined;
    return { createdAt, id };
  } catch {
    return undefined;
  }
}
