CREATE TABLE "coupon_redemptions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"coupon_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"checkout_key" text NOT NULL,
	"user_id" text NOT NULL,
	"plan_id" uuid,
	"checkout_session_id" text,
	"status" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "coupon_stripe_coupons" (
	"coupon_id" uuid NOT NULL,
	"merchant_account_id" uuid NOT NULL,
	"provider_account_id" text NOT NULL,
	"stripe_coupon_id" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "coupon_stripe_coupons_coupon_id_merchant_account_id_provider_account_id_pk" PRIMARY KEY("coupon_id","merchant_account_id","provider_account_id")
);
--> statement-breakpoint
CREATE TABLE "coupons" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"code" text NOT NULL,
	"coupon_type" text NOT NULL,
	"amount" bigint NOT NULL,
	"currency" text,
	"renewal_constraint" text NOT NULL,
	"renewal_months" integer,
	"auto_apply" boolean DEFAULT false NOT NULL,
	"invitee_mode" text NOT NULL,
	"plan_scope" text NOT NULL,
	"plan_ids" uuid[] DEFAULT '{}'::uuid[] NOT NULL,
	"max_uses" integer,
	"uses" integer DEFAULT 0 NOT NULL,
	"expires_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "coupon_redemptions" ADD CONSTRAINT "coupon_redemptions_coupon_id_coupons_id_fk" FOREIGN KEY ("coupon_id") REFERENCES "public"."coupons"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "coupon_redemptions" ADD CONSTRAINT "coupon_redemptions_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "coupon_stripe_coupons" ADD CONSTRAINT "coupon_stripe_coupons_coupon_id_coupons_id_fk" FOREIGN KEY ("coupon_id") REFERENCES "public"."coupons"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "coupon_stripe_coupons" ADD CONSTRAINT "coupon_stripe_coupons_merchant_account_id_merchant_accounts_id_fk" FOREIGN KEY ("merchant_account_id") REFERENCES "public"."merchant_accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "coupons" ADD CONSTRAINT "coupons_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "coupon_redemptions_coupon_checkout_key" ON "coupon_redemptions" USING btree ("coupon_id","checkout_key");--> statement-breakpoint
CREATE INDEX "coupon_redemptions_session_idx" ON "coupon_redemptions" USING btree ("checkout_session_id") WHERE checkout_session_id IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "coupons_project_code_key" ON "coupons" USING btree ("project_id",upper("code"));--> statement-breakpoint
CREATE INDEX "coupons_project_created_idx" ON "coupons" USING btree ("project_id","created_at","id");--> statement-breakpoint
CREATE INDEX "coupons_project_auto_apply_idx" ON "coupons" USING btree ("project_id") WHERE auto_apply;