-- Throughput: a webhook delivery's body is rendered from its event when the delivery is
-- claimed (src/store/delivery-claim.ts, tenure_webhook_body in drizzle/functions.sql, revision 13)
-- instead of stored once per event by the fan-out. The event is never changed, so every attempt
-- and every replay still sends the same bytes; the fan-out writes one row per delivery instead of
-- that plus a copy of the event's data as text (its own heap row, index entry and WAL).
DROP TABLE "webhook_payloads" CASCADE;
