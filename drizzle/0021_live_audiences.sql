-- Throughput: an event gets its broadcast mark only when its project has a live audience
-- (drizzle/functions.sql, revision 11; src/live/audiences.ts): a row while some node has a live
-- connection of the project. Nodes write them as connections arrive; none are needed before (an
-- upgrade restarts every node, docs/scaling.md "Upgrading", and their clients reconnect).
CREATE TABLE "live_audiences" (
	"project_id" uuid PRIMARY KEY NOT NULL,
	"seen_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "live_audiences" ADD CONSTRAINT "live_audiences_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;