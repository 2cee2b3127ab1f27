CREATE TABLE "policy_confirmations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"user_id" text NOT NULL,
	"pay_link_id" text NOT NULL,
	"terms_url" text,
	"privacy_url" text,
	"minimum_age" integer,
	"confirmed_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "trials" (
	"project_id" uuid NOT NULL,
	"user_id" text NOT NULL,
	"plan_id" uuid,
	"checkout_key" text NOT NULL,
	"session_id" text,
	"state" text NOT NULL,
	"trial_days" integer NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp (3) with time zone,
	CONSTRAINT "trials_project_id_user_id_pk" PRIMARY KEY("project_id","user_id")
);
--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "trial_days" integer;--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "reminder_offsets" jsonb;--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "trial_ends_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "email" text;--> statement-breakpoint
ALTER TABLE "policy_confirmations" ADD CONSTRAINT "policy_confirmations_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trials" ADD CONSTRAINT "trials_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trials" ADD CONSTRAINT "trials_plan_id_plans_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."plans"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "policy_confirmations_link_key" ON "policy_confirmations" USING btree ("pay_link_id");--> statement-breakpoint
CREATE INDEX "policy_confirmations_user_idx" ON "policy_confirmations" USING btree ("project_id","user_id");--> statement-breakpoint
CREATE INDEX "trials_session_idx" ON "trials" USING btree ("session_id");