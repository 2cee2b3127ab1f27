CREATE TABLE "reminder_cursors" (
	"reminder_offset" text PRIMARY KEY NOT NULL,
	"end_date" timestamp (3) with time zone NOT NULL,
	"membership_id" uuid NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reminders" (
	"membership_id" uuid NOT NULL,
	"end_date" timestamp (3) with time zone NOT NULL,
	"reminder_offset" text NOT NULL,
	"project_id" uuid NOT NULL,
	"state" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "reminders_membership_id_end_date_reminder_offset_pk" PRIMARY KEY("membership_id","end_date","reminder_offset")
);
--> statement-breakpoint
DROP INDEX "memberships_active_end_idx";--> statement-breakpoint
ALTER TABLE "notifications" ADD COLUMN "end_date" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "notifications" ADD COLUMN "reminder_offset" text;--> statement-breakpoint
ALTER TABLE "reminders" ADD CONSTRAINT "reminders_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "reminders_project_idx" ON "reminders" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "memberships_active_end_idx" ON "memberships" USING btree ("end_date","id") WHERE status = 'active';