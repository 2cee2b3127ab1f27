CREATE TABLE "pay_links" (
	"id_hash" text PRIMARY KEY NOT NULL,
	"project_id" uuid NOT NULL,
	"plan_id" uuid NOT NULL,
	"user_id" text NOT NULL,
	"coupon" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"merchant_account_id" uuid,
	"session_id" text,
	"session_url" text,
	"session_expires_at" timestamp (3) with time zone,
	"completed_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "portal_links" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"project_id" uuid NOT NULL,
	"user_id" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"used_at" timestamp (3) with time zone,
	"session_hash" text,
	"session_expires_at" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "pay_links" ADD CONSTRAINT "pay_links_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pay_links" ADD CONSTRAINT "pay_links_plan_id_plans_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."plans"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pay_links" ADD CONSTRAINT "pay_links_merchant_account_id_merchant_accounts_id_fk" FOREIGN KEY ("merchant_account_id") REFERENCES "public"."merchant_accounts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "portal_links" ADD CONSTRAINT "portal_links_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "pay_links_project_user_idx" ON "pay_links" USING btree ("project_id","user_id","created_at");--> statement-breakpoint
CREATE INDEX "pay_links_expires_idx" ON "pay_links" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "portal_links_expires_idx" ON "portal_links" USING btree ("expires_at");