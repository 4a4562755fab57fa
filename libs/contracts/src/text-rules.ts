/**
 * The contract's text rules (docs/api.md#transactions, #errors) as data, so every validator of the project (the
 * gateway's, transactions-svc's and ui's Ajv, via @dw/http-kit) and /openapi.json read the same
 * rules from one place.
 *
 * "Printable" is any Unicode character except U+0000–U+001F and U+007F. A string must also be
 * well-formed Unicode: a lone surrogate (`"\udfff"` in JSON) is not a character at all, and
 * PostgreSQL's text and jsonb cannot store one, so it is refused like a control character. Ajv
 * compiles patterns with the `u` flag, under which `[\uD800-\uDFFF]` matches only an unpaired
 * surrogate (a pair is one astral code point, e.g. an emoji, and stays allowed).
 */
const NOT_PRINTABLE = '\\u0000-\\u001F\\u007F\\uD800-\\uDFFF';

/** One or more printable characters. */
export const PRINTABLE_PATTERN = `^[^${NOT_PRINTABLE}]+$`;
/** Zero or more printable characters. */
export const PRINTABLE_OR_EMPTY_PATTERN = `^[^${NOT_PRINTABLE}]*$`;

/**
 * The canonical textual UUID (8-4-4-4-12 hex digits), nothing else: JSON Schema's `uuid` format as
 * ajv-formats implements it also accepts `urn:uuid:…`, which PostgreSQL's uuid type refuses.
 */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const UUID = new RegExp(UUID_PATTERN);

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;
// Date.UTC reads years 0–99 as 1900–1999, so the earliest instant is built with setUTCFullYear.
const EARLIEST = new Date(0).setUTCFullYear(1, 0, 1);
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * RFC 3339 date-time, validated by round trip: the fields must name a real instant (no
 * 2026-02-31, no hour 24, no leap second 23:59:60, which JavaScript rolls over or refuses while
 * PostgreSQL reads them differently), and the instant must lie in the years 0001–9999, which both
 * JavaScript and PostgreSQL's timestamptz represent (year 0000 does not exist in PostgreSQL).
 */
export function isContractDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  const roundTrips =
    d.getUTCFullYear() === year &&
    d.getUTCMonth() === month - 1 &&
    d.getUTCDate() === day &&
    d.getUTCHours() === hour &&
    d.getUTCMinutes() === minute &&
    d.getUTCSeconds() === second;
  if (!roundTrips) return false;
  let offsetMinutes = 0;
  if (m[8] === undefined) {
    const offHours = Number(m[10]);
    const offMinutes = Number(m[11]);
    // PostgreSQL refuses offsets from ±16:00 on; real zones span −12:00…+14:00.
    if (offHours > 15 || offMinutes > 59) return false;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (offHours * 60 + offMinutes);
  }
  const instant = d.getTime() - offsetMinutes * 60_000;
  return year >= 1 && instant >= EARLIEST && instant <= LATEST;
}

/**
 * Formats that replace ajv-formats' own of the same name. Register them after ajv-formats:
 * `for (const [name, check] of Object.entries(CONTRACT_FORMATS)) ajv.addFormat(name, check)`.
 */
export const CONTRACT_FORMATS: Record<string, (value: string) => boolean> = {
  'date-time': isContractDateTime,
  uuid: (value) => UUID.test(value),
};
