ALTER TABLE "guild_joins" ALTER COLUMN "plan_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "guild_joins" ADD COLUMN "guild_id" text;--> statement-breakpoint
ALTER TABLE "web_logins" ADD COLUMN "user_id" text;--> statement-breakpoint
ALTER TABLE "web_logins" ADD COLUMN "guild_id" text;