CREATE TABLE "member_stripe_customers" (
	"project_id" uuid NOT NULL,
	"user_id" text NOT NULL,
	"merchant_account_id" uuid NOT NULL,
	"customer_id" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "member_stripe_customers_project_id_user_id_merchant_account_id_pk" PRIMARY KEY("project_id","user_id","merchant_account_id")
);
--> statement-breakpoint
ALTER TABLE "member_stripe_customers" ADD CONSTRAINT "member_stripe_customers_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "member_stripe_customers" ADD CONSTRAINT "member_stripe_customers_merchant_account_id_merchant_accounts_id_fk" FOREIGN KEY ("merchant_account_id") REFERENCES "public"."merchant_accounts"("id") ON DELETE cascade ON UPDATE no action;