-- The two tables of marks (0018) are queues: each broadcast marks a row, each planned event's row
-- is deleted, and the claims read them from the head of an index. Dead entries there are stepped
-- over by every claim until a vacuum removes them, so the claims slow down as they pile up. The
-- default autovacuum waits for a fifth of the table to be dead, which for event_broadcasts (a row
-- per event kept) grows with the history; these vacuum after a fixed number of changes instead.
ALTER TABLE "event_broadcasts" SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 10000, autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 100000);
--> statement-breakpoint
ALTER TABLE "event_plan_queue" SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 10000);
