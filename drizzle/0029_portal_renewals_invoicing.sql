CREATE TABLE "member_invoicing" (
	"project_id" uuid NOT NULL,
	"user_id" text NOT NULL,
	"name" text,
	"company" text,
	"address" jsonb,
	"vat_id" text,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "member_invoicing_project_id_user_id_pk" PRIMARY KEY("project_id","user_id")
);
--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "subscription_cancel_at_period_end" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "member_invoicing" ADD CONSTRAINT "member_invoicing_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;