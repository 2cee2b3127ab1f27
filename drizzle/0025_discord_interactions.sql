CREATE TABLE "discord_interactions" (
	"id" text PRIMARY KEY NOT NULL,
	"seen_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "integrations" ADD COLUMN "application_id" text;--> statement-breakpoint
ALTER TABLE "integrations" ADD COLUMN "verify_key" text;--> statement-breakpoint
CREATE INDEX "discord_interactions_seen_idx" ON "discord_interactions" USING btree ("seen_at");