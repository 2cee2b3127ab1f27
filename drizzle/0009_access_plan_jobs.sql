CREATE TABLE "access_plan_jobs" (
	"project_id" uuid PRIMARY KEY NOT NULL,
	"after_user_id" text NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "access_plan_jobs" ADD CONSTRAINT "access_plan_jobs_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;