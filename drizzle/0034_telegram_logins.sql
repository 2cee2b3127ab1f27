CREATE TABLE "telegram_logins" (
	"hash_digest" text PRIMARY KEY NOT NULL,
	"project_id" uuid NOT NULL,
	"used_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "telegram_logins" ADD CONSTRAINT "telegram_logins_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "telegram_logins_expires_idx" ON "telegram_logins" USING btree ("expires_at");