-- Time-ordered ids for new transactions and events: a version 7 UUID (RFC 9562), its first 48 bits
-- the Unix time in milliseconds and the other 74 random, like gen_random_uuid()'s. Random keys put
-- each new row on a random leaf of every index keyed by them (transactions, transaction_events,
-- callback_deliveries, callback_attempts), so as history grows the pages a create dirties spread
-- over the whole of each index, out of shared buffers and into the WAL as full-page images after
-- every checkpoint. Time-ordered keys land together at the right edge, whatever the history holds
-- (docs/decisions.md). PostgreSQL 18 has uuidv7() built in; this is the same value for 15 to 17.
CREATE FUNCTION uuid_v7() RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL SAFE
AS $$
  SELECT encode(
    set_bit(
      set_bit(
        overlay(uuid_send(gen_random_uuid())
                PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                FROM 1 FOR 6),
        52, 1),
      53, 1),
    'hex')::uuid
$$;
