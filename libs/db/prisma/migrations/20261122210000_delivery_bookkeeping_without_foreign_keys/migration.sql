-- The delivery bookkeeping keeps no foreign keys: a callback_deliveries row is written in the same
-- statement as its event, a callback_attempts row in the same statement that updates its delivery,
-- and the retention job removes the three together. A foreign key re-checked each of them per row
-- (an index probe per create and per attempt), and on a young database that check ran a plan
-- PostgreSQL had cached while the table was small: a scan of callback_deliveries per attempt until
-- autovacuum next analyzed it (docs/decisions.md).
ALTER TABLE "callback_attempts" DROP CONSTRAINT "callback_attempts_event_id_fkey";
ALTER TABLE "callback_deliveries" DROP CONSTRAINT "callback_deliveries_event_id_fkey";
