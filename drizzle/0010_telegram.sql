CREATE TABLE "telegram_invites" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"target_id" uuid NOT NULL,
	"user_id" text NOT NULL,
	"membership_id" uuid,
	"chat_id" text NOT NULL,
	"bot_id" text NOT NULL,
	"invite_link" text NOT NULL,
	"name" text NOT NULL,
	"creates_join_request" boolean DEFAULT false NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"used_at" timestamp (3) with time zone,
	"used_by" text,
	"revoked_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "telegram_updates" (
	"project_id" uuid NOT NULL,
	"bot_id" text NOT NULL,
	"update_id" bigint NOT NULL,
	"payload" jsonb NOT NULL,
	"received_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"handled_at" timestamp (3) with time zone,
	CONSTRAINT "telegram_updates_project_id_bot_id_update_id_pk" PRIMARY KEY("project_id","bot_id","update_id")
);
--> statement-breakpoint
ALTER TABLE "integrations" ADD COLUMN "update_offset" bigint;--> statement-breakpoint
ALTER TABLE "telegram_invites" ADD CONSTRAINT "telegram_invites_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "telegram_updates" ADD CONSTRAINT "telegram_updates_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "telegram_invites_link_key" ON "telegram_invites" USING btree ("invite_link");--> statement-breakpoint
CREATE INDEX "telegram_invites_member_idx" ON "telegram_invites" USING btree ("project_id","user_id","target_id","created_at");--> statement-breakpoint
CREATE INDEX "telegram_updates_unhandled_idx" ON "telegram_updates" USING btree ("project_id","update_id") WHERE handled_at IS NULL;