CREATE TABLE "merchant_accounts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"provider" text NOT NULL,
	"environment" text NOT NULL,
	"secret_key_sealed" text NOT NULL,
	"webhook_secret_sealed" text,
	"provider_account_id" text NOT NULL,
	"provider_account_name" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"reconciled_through" timestamp (3) with time zone,
	"reconciled_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "payment_events" (
	"merchant_account_id" uuid NOT NULL,
	"event_id" text NOT NULL,
	"type" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"received_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"source" text NOT NULL,
	"outcome" text NOT NULL,
	CONSTRAINT "payment_events_merchant_account_id_event_id_pk" PRIMARY KEY("merchant_account_id","event_id")
);
--> statement-breakpoint
CREATE TABLE "payments" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"merchant_account_id" uuid,
	"provider" text NOT NULL,
	"payment_key" text NOT NULL,
	"user_id" text NOT NULL,
	"plan_id" uuid,
	"amount_minor" bigint NOT NULL,
	"currency" text NOT NULL,
	"status" text NOT NULL,
	"checkout_session_id" text,
	"payment_intent_id" text,
	"invoice_id" text,
	"subscription_id" text,
	"customer_id" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "subscription_id" text;--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "subscription_status" text;--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "subscription_status_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "merchant_accounts" ADD CONSTRAINT "merchant_accounts_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_events" ADD CONSTRAINT "payment_events_merchant_account_id_merchant_accounts_id_fk" FOREIGN KEY ("merchant_account_id") REFERENCES "public"."merchant_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_merchant_account_id_merchant_accounts_id_fk" FOREIGN KEY ("merchant_account_id") REFERENCES "public"."merchant_accounts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_plan_id_plans_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."plans"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "merchant_accounts_project_provider_env_key" ON "merchant_accounts" USING btree ("project_id","provider","environment");--> statement-breakpoint
CREATE INDEX "merchant_accounts_project_created_idx" ON "merchant_accounts" USING btree ("project_id","created_at","id");--> statement-breakpoint
CREATE INDEX "payment_events_received_idx" ON "payment_events" USING btree ("received_at");--> statement-breakpoint
CREATE UNIQUE INDEX "payments_project_provider_key" ON "payments" USING btree ("project_id","provider","payment_key");--> statement-breakpoint
CREATE INDEX "payments_project_created_idx" ON "payments" USING btree ("project_id","created_at","id");--> statement-breakpoint
CREATE INDEX "payments_payment_intent_idx" ON "payments" USING btree ("payment_intent_id") WHERE payment_intent_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "memberships_subscription_idx" ON "memberships" USING btree ("project_id","subscription_id") WHERE subscription_id IS NOT NULL;