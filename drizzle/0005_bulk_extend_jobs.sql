CREATE TABLE "bulk_extend_jobs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"end_date" timestamp (3) with time zone NOT NULL,
	"boundary" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"cursor_created_at" timestamp (3) with time zone DEFAULT '-infinity' NOT NULL,
	"cursor_id" uuid DEFAULT '00000000-0000-0000-0000-000000000000' NOT NULL,
	"total" integer DEFAULT 0 NOT NULL,
	"status" text DEFAULT 'running' NOT NULL,
	"heartbeat_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "bulk_extend_jobs" ADD CONSTRAINT "bulk_extend_jobs_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "bulk_extend_jobs_running_key" ON "bulk_extend_jobs" USING btree ("project_id") WHERE status = 'running';--> statement-breakpoint
CREATE INDEX "bulk_extend_jobs_status_idx" ON "bulk_extend_jobs" USING btree ("status","heartbeat_at");