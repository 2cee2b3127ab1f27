-- Throughput (the import): the foreign keys from events, memberships and users to their
-- project checked and locked the project row once per inserted row, three times per imported
-- membership (its row, its user, its event). Statement triggers now check and lock it once per
-- statement (tenure_events_inserted, tenure_memberships_held, tenure_users_held in
-- drizzle/functions.sql, applied in this same transaction), and tenure_project_cascade deletes a
-- deleted project's rows as ON DELETE CASCADE did.
ALTER TABLE "events" DROP CONSTRAINT "events_project_id_projects_id_fk";
--> statement-breakpoint
ALTER TABLE "memberships" DROP CONSTRAINT "memberships_project_id_projects_id_fk";
--> statement-breakpoint
ALTER TABLE "users" DROP CONSTRAINT "users_project_id_projects_id_fk";
