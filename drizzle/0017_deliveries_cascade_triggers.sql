-- Expiry at scale: the fan-out trigger writes a payload and a delivery per event, and
-- these three foreign keys ran a query and a row lock each per row, checking an event the same
-- statement had just inserted and a webhook the trigger had just locked. What they did on delete
-- is now done by the triggers tenure_event_cascade and tenure_webhook_cascade (drizzle/functions.sql,
-- applied in this same transaction), and the other writers, replays, lock the event and webhook
-- themselves (src/store/delivery-log.store.ts).
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_webhook_id_webhooks_id_fk";
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_event_id_events_id_fk";
--> statement-breakpoint
ALTER TABLE "webhook_payloads" DROP CONSTRAINT "webhook_payloads_event_id_events_id_fk";
