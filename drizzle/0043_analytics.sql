CREATE TABLE "analytics_days" (
	"project_id" uuid NOT NULL,
	"day" date NOT NULL,
	"plan_key" uuid NOT NULL,
	"currency" text NOT NULL,
	"folded" boolean DEFAULT false NOT NULL,
	"members_started" integer DEFAULT 0 NOT NULL,
	"members_ended" integer DEFAULT 0 NOT NULL,
	"gross_count" integer DEFAULT 0 NOT NULL,
	"gross_minor" bigint DEFAULT 0 NOT NULL,
	"refunded_count" integer DEFAULT 0 NOT NULL,
	"refunded_minor" bigint DEFAULT 0 NOT NULL,
	"disputed_count" integer DEFAULT 0 NOT NULL,
	"disputed_minor" bigint DEFAULT 0 NOT NULL,
	"failed_count" integer DEFAULT 0 NOT NULL,
	"mrr_minor" numeric DEFAULT '0' NOT NULL
);
--> statement-breakpoint
ALTER TABLE "analytics_days" ADD CONSTRAINT "analytics_days_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "analytics_days_folded_key" ON "analytics_days" USING btree ("project_id","day","plan_key","currency") WHERE folded;--> statement-breakpoint
CREATE INDEX "analytics_days_appended_idx" ON "analytics_days" USING btree ("project_id","day") WHERE NOT folded;--> statement-breakpoint
-- Backfill (docs/analytics.md, "Upgrading"): each existing membership booked as a new one, its box
-- [start_date, end_date) whole (the gaps of a membership that lapsed and was renewed before this
-- migration are not known); from here on drizzle/functions.sql's triggers book every change.
INSERT INTO "analytics_days" ("project_id", "day", "plan_key", "currency", "members_started", "members_ended")
SELECT m.project_id, (v.ts AT TIME ZONE 'UTC')::date, coalesce(m.plan_id, '00000000-0000-0000-0000-000000000000'), '', sum(v.started), sum(v.ended)
FROM memberships m
CROSS JOIN LATERAL (VALUES (m.start_date, 1, 0), (m.end_date, 0, 1)) AS v(ts, started, ended)
WHERE m.start_date < m.end_date
GROUP BY 1, 2, 3;
--> statement-breakpoint
-- Each existing payment booked as the payments trigger books one recorded in its present status:
-- gross on its created_at, a reversal on its updated_at, a failure on its created_at, and a
-- subscription's payment in MRR over the period it paid for (less what a reversal took back).
INSERT INTO "analytics_days" ("project_id", "day", "plan_key", "currency", "gross_count", "gross_minor", "refunded_count", "refunded_minor",
  "disputed_count", "disputed_minor", "failed_count", "mrr_minor")
SELECT x.project_id, (v.ts AT TIME ZONE 'UTC')::date, coalesce(x.plan_id, '00000000-0000-0000-0000-000000000000'), x.currency,
  sum(v.gc), sum(v.gm), sum(v.rc), sum(v.rm), sum(v.dc), sum(v.dm), sum(v.fc), sum(v.mrr)
FROM (
  SELECT p.*, p.status IN ('succeeded', 'refunded', 'disputed') AS paid,
    CASE WHEN p.subscription_id IS NOT NULL THEN p.created_at + pl.duration::interval END AS covered,
    CASE WHEN p.subscription_id IS NOT NULL THEN p.amount_minor::numeric / nullif(
      extract(year FROM pl.duration::interval) * 12 + extract(month FROM pl.duration::interval)
      + (extract(day FROM pl.duration::interval) + extract(hour FROM pl.duration::interval) / 24) / 30.4375, 0) END AS monthly
  FROM payments p LEFT JOIN plans pl ON pl.id = p.plan_id
) x
CROSS JOIN LATERAL (VALUES
  (x.paid, x.created_at, 1, x.amount_minor, 0, 0::bigint, 0, 0::bigint, 0, 0::numeric),
  (x.paid AND x.monthly IS NOT NULL, x.created_at, 0, 0::bigint, 0, 0::bigint, 0, 0::bigint, 0, x.monthly),
  (x.paid AND x.monthly IS NOT NULL, x.covered, 0, 0::bigint, 0, 0::bigint, 0, 0::bigint, 0, -x.monthly),
  (x.status = 'refunded', x.updated_at, 0, 0::bigint, 1, x.amount_minor, 0, 0::bigint, 0, 0::numeric),
  (x.status = 'disputed', x.updated_at, 0, 0::bigint, 0, 0::bigint, 1, x.amount_minor, 0, 0::numeric),
  (x.status IN ('refunded', 'disputed') AND x.monthly IS NOT NULL AND greatest(x.created_at, x.updated_at) < x.covered, greatest(x.created_at, x.updated_at), 0, 0::bigint, 0, 0::bigint, 0, 0::bigint, 0, -x.monthly),
  (x.status IN ('refunded', 'disputed') AND x.monthly IS NOT NULL AND greatest(x.created_at, x.updated_at) < x.covered, x.covered, 0, 0::bigint, 0, 0::bigint, 0, 0::bigint, 0, x.monthly),
  (x.status = 'failed', x.created_at, 0, 0::bigint, 0, 0::bigint, 0, 0::bigint, 1, 0::numeric)
) AS v(yes, ts, gc, gm, rc, rm, dc, dm, fc, mrr)
WHERE v.yes
GROUP BY 1, 2, 3, 4;
