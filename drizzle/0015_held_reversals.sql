CREATE TABLE "held_reversals" (
	"project_id" uuid NOT NULL,
	"merchant_account_id" uuid NOT NULL,
	"provider" text NOT NULL,
	"payment_intent_id" text NOT NULL,
	"status" text NOT NULL,
	"event_id" text NOT NULL,
	"event_created_at" timestamp (3) with time zone NOT NULL,
	"received_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "held_reversals_project_id_provider_payment_intent_id_pk" PRIMARY KEY("project_id","provider","payment_intent_id")
);
--> statement-breakpoint
ALTER TABLE "held_reversals" ADD CONSTRAINT "held_reversals_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "held_reversals" ADD CONSTRAINT "held_reversals_merchant_account_id_merchant_accounts_id_fk" FOREIGN KEY ("merchant_account_id") REFERENCES "public"."merchant_accounts"("id") ON DELETE cascade ON UPDATE no action;