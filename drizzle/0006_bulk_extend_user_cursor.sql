ALTER TABLE "bulk_extend_jobs" ADD COLUMN "cursor_user_id" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "bulk_extend_jobs" DROP COLUMN "cursor_created_at";--> statement-breakpoint
ALTER TABLE "bulk_extend_jobs" DROP COLUMN "cursor_id";