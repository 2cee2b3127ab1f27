CREATE TABLE "access" (
	"project_id" uuid NOT NULL,
	"target_id" uuid NOT NULL,
	"user_id" text NOT NULL,
	"platform" text NOT NULL,
	"kind" text NOT NULL,
	"external_id" text NOT NULL,
	"guild_id" text,
	"on_expiry" text NOT NULL,
	"desired" text NOT NULL,
	"applied" text,
	"state" text NOT NULL,
	"last_error" jsonb,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"failed_generation" integer,
	"synced_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "access_target_id_user_id_pk" PRIMARY KEY("target_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "integrations" (
	"project_id" uuid NOT NULL,
	"platform" text NOT NULL,
	"bot_token_sealed" text NOT NULL,
	"bot_id" text NOT NULL,
	"bot_name" text NOT NULL,
	"connected_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"health" text DEFAULT 'ok' NOT NULL,
	"last_error" jsonb,
	"generation" integer DEFAULT 1 NOT NULL,
	"lease_owner" text,
	"lease_expires_at" timestamp (3) with time zone,
	"reconciled_at" timestamp (3) with time zone,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "integrations_project_id_platform_pk" PRIMARY KEY("project_id","platform")
);
--> statement-breakpoint
ALTER TABLE "targets" ADD COLUMN "on_expiry" text;--> statement-breakpoint
ALTER TABLE "targets" ADD COLUMN "health" text DEFAULT 'ok' NOT NULL;--> statement-breakpoint
ALTER TABLE "targets" ADD COLUMN "health_error" jsonb;--> statement-breakpoint
-- Events written before the access engine existed have nothing to plan: they are marked read at
-- once (a default of now() fills existing rows without rewriting the table), then the default goes.
ALTER TABLE "events" ADD COLUMN "access_planned_at" timestamp (3) with time zone DEFAULT now();--> statement-breakpoint
ALTER TABLE "events" ALTER COLUMN "access_planned_at" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "access" ADD CONSTRAINT "access_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "integrations" ADD CONSTRAINT "integrations_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "access_project_user_idx" ON "access" USING btree ("project_id","user_id","target_id");--> statement-breakpoint
CREATE INDEX "access_pending_idx" ON "access" USING btree ("project_id","next_attempt_at") WHERE state = 'pending';--> statement-breakpoint
CREATE UNIQUE INDEX "integrations_bot_key" ON "integrations" USING btree ("platform","bot_id");--> statement-breakpoint
CREATE INDEX "events_unplanned_idx" ON "events" USING btree ("seq") WHERE access_planned_at IS NULL;