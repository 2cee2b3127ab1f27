-- Writes at the database's pace. The live broadcaster and the access planner marked each
-- event they had read by updating the event row (broadcast_at, access_planned_at). Both columns
-- were in partial indexes, so every mark was a non-HOT update: a new copy of the wide row (its
-- jsonb data) and an entry in each of the event's six indexes, twice per event; together about as
-- much of the database's work as the write that made the event. The marks now live in two narrow
-- tables keyed by the event's seq, written by the AFTER INSERT trigger on events
-- (tenure_events_inserted, drizzle/functions.sql, which also does what tenure_webhook_fan_out did)
-- and deleted with the event by tenure_event_cascade.
--
-- Nodes of an older version read and write the dropped columns: stop them before migrating
-- (docs/scaling.md, "Upgrading").
CREATE TABLE "event_broadcasts" (
	"seq" bigint PRIMARY KEY NOT NULL,
	"broadcast_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "event_plan_queue" (
	"seq" bigint PRIMARY KEY NOT NULL
);
--> statement-breakpoint
INSERT INTO "event_broadcasts" ("seq", "broadcast_at") SELECT "seq", "broadcast_at" FROM "events";
--> statement-breakpoint
INSERT INTO "event_plan_queue" ("seq") SELECT "seq" FROM "events" WHERE "access_planned_at" IS NULL AND NOT "live_only";
--> statement-breakpoint
DROP TRIGGER IF EXISTS "tenure_webhook_fan_out" ON "events";
--> statement-breakpoint
DROP FUNCTION IF EXISTS tenure_webhook_fan_out();
--> statement-breakpoint
DROP INDEX "events_unbroadcast_idx";--> statement-breakpoint
DROP INDEX "events_unplanned_idx";--> statement-breakpoint
CREATE INDEX "event_broadcasts_pending_idx" ON "event_broadcasts" USING btree ("seq") WHERE broadcast_at IS NULL;--> statement-breakpoint
ALTER TABLE "events" DROP COLUMN "broadcast_at";--> statement-breakpoint
ALTER TABLE "events" DROP COLUMN "access_planned_at";
