CREATE TABLE "bans" (
	"project_id" uuid NOT NULL,
	"user_id" text NOT NULL,
	"banned_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"banned_by" text,
	"reason" text,
	CONSTRAINT "bans_project_id_user_id_pk" PRIMARY KEY("project_id","user_id")
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"project_id" uuid NOT NULL,
	"key" text NOT NULL,
	"request_hash" text NOT NULL,
	"state" text DEFAULT 'running' NOT NULL,
	"response_status" integer,
	"response_headers" jsonb,
	"response_body" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "idempotency_keys_project_id_key_pk" PRIMARY KEY("project_id","key")
);
--> statement-breakpoint
CREATE TABLE "instance_secrets" (
	"name" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "plan_targets" (
	"plan_id" uuid NOT NULL,
	"target_id" uuid NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "plan_targets_plan_id_target_id_pk" PRIMARY KEY("plan_id","target_id")
);
--> statement-breakpoint
CREATE TABLE "settings" (
	"project_id" uuid NOT NULL,
	"key" text NOT NULL,
	"value" jsonb NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "settings_project_id_key_pk" PRIMARY KEY("project_id","key")
);
--> statement-breakpoint
CREATE TABLE "targets" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"project_id" uuid NOT NULL,
	"name" text NOT NULL,
	"platform" text NOT NULL,
	"kind" text NOT NULL,
	"external_id" text NOT NULL,
	"is_enabled" boolean DEFAULT true NOT NULL,
	"parent_target_id" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"project_id" uuid NOT NULL,
	"user_id" text NOT NULL,
	"first_name" text,
	"username" text,
	"is_admin" boolean DEFAULT false NOT NULL,
	"balance" numeric(14, 2) DEFAULT '0' NOT NULL,
	"currency" text DEFAULT 'USD' NOT NULL,
	"first_seen" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"last_seen" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "users_project_id_user_id_pk" PRIMARY KEY("project_id","user_id")
);
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "live_only" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "broadcast_at" timestamp (3) with time zone;--> statement-breakpoint
-- Events from before live updates existed are history, not news: they are never broadcast.
UPDATE "events" SET "broadcast_at" = "emitted_at";--> statement-breakpoint
ALTER TABLE "plans" ADD COLUMN "deleted_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "bans" ADD CONSTRAINT "bans_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_targets" ADD CONSTRAINT "plan_targets_plan_id_plans_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."plans"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_targets" ADD CONSTRAINT "plan_targets_target_id_targets_id_fk" FOREIGN KEY ("target_id") REFERENCES "public"."targets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "settings" ADD CONSTRAINT "settings_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "targets" ADD CONSTRAINT "targets_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "idempotency_keys_expires_idx" ON "idempotency_keys" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "plan_targets_target_idx" ON "plan_targets" USING btree ("target_id");--> statement-breakpoint
CREATE UNIQUE INDEX "targets_project_external_key" ON "targets" USING btree ("project_id","platform","external_id");--> statement-breakpoint
CREATE INDEX "targets_project_created_idx" ON "targets" USING btree ("project_id","created_at","id");--> statement-breakpoint
CREATE INDEX "users_project_first_seen_idx" ON "users" USING btree ("project_id","first_seen","user_id");--> statement-breakpoint
CREATE INDEX "events_unbroadcast_idx" ON "events" USING btree ("seq") WHERE broadcast_at IS NULL;--> statement-breakpoint
CREATE INDEX "events_emitted_idx" ON "events" USING btree ("emitted_at");
--> statement-breakpoint
-- The fan-out of 0002, now skipping live-only events (the webhook-deliveries channel's own events:
-- sending them to webhooks would make every delivery produce another).
CREATE OR REPLACE FUNCTION tenure_webhook_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH targets AS (
    SELECT e.id AS event_id, e.project_id, e.type, e.emitted_at, e.data, w.id AS webhook_id
    FROM new_events e
    CROSS JOIN LATERAL (
      SELECT w.id FROM webhooks w
      WHERE w.project_id = e.project_id AND w.enabled
        AND (e.target_webhook_id IS NULL OR w.id = e.target_webhook_id)
      FOR KEY SHARE
    ) w
    WHERE NOT e.live_only
  ), payloads AS (
    INSERT INTO webhook_payloads (event_id, body)
    SELECT DISTINCT ON (t.event_id) t.event_id, tenure_webhook_body(t.event_id, t.type, t.project_id, t.emitted_at, t.data)
    FROM targets t
    ON CONFLICT (event_id) DO NOTHING
  )
  INSERT INTO webhook_deliveries (project_id, webhook_id, event_id)
  SELECT t.project_id, t.webhook_id, t.event_id FROM targets t;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- New events wake the live-update broadcasters (channel tenure_events), at commit, like 0002's
-- delivery wake-up: LISTEN on PostgreSQL, PGlite's in-process notification on embedded storage.
CREATE FUNCTION tenure_events_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_events) THEN
    PERFORM pg_notify('tenure_events', '');
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER tenure_events_wake AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION tenure_events_wake();
