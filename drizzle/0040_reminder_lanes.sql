-- Reminders' cursors per lane (a fixed share of the memberships by id), so an offset's lanes
-- advance side by side. Every lane starts where the offset's single cursor stood: nothing is
-- skipped, and what a lane meets twice the reminders' primary key writes once.
ALTER TABLE "reminder_cursors" DROP CONSTRAINT "reminder_cursors_pkey";--> statement-breakpoint
ALTER TABLE "reminder_cursors" ADD COLUMN "lane" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "reminder_cursors" ADD CONSTRAINT "reminder_cursors_reminder_offset_lane_pk" PRIMARY KEY("reminder_offset","lane");--> statement-breakpoint
INSERT INTO "reminder_cursors" ("reminder_offset", "lane", "end_date", "membership_id")
SELECT c."reminder_offset", l.lane, c."end_date", c."membership_id"
FROM "reminder_cursors" c CROSS JOIN generate_series(1, 3) AS l(lane)
WHERE c."lane" = 0;
