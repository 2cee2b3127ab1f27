-- Wake-ups leave the writing transaction. The triggers below called pg_notify inside
-- every transaction that inserted an event or a delivery, and PostgreSQL serialises the commits of
-- all notifying transactions on one global lock. The writer's process now signals after commit,
-- coalesced (src/store/wakeups.ts), on the same channels.
DROP TRIGGER IF EXISTS tenure_webhook_wake ON webhook_deliveries;
--> statement-breakpoint
DROP FUNCTION IF EXISTS tenure_webhook_wake();
--> statement-breakpoint
DROP TRIGGER IF EXISTS tenure_events_wake ON events;
--> statement-breakpoint
DROP FUNCTION IF EXISTS tenure_events_wake();
