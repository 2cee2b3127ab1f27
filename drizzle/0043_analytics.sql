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
SELECT m.project_id, (v.ts AT TIME ZONE 'UTC')::date, '00000000-0000-0000-0000-000000000000'::uuid, '', sum(v.started), sum(v.ended)
FROM memberships m
CROSS JOIN LATERAL (VALUES (m.start_date, 1, 0), (m.end_date, 0, 1)) AS v(ts, started, ended)
WHERE m.start_date < m.end_date
GROUP BY 1, 2, 3;
--> statement-breakpoint
-- Each existing payment booked as the payments trigger books one recorded in its present status:
-- gross on its created_at, a reversal on its updated_at, a failure on its created_at, and a
-- subscription's payment in MRR over the period it paid for (less what a reversal took back).
-- Payments are first counted and summed per plan, status and days (g), so the division to a
-- month's amount is done per group, not per payment.
INSERT INTO "analytics_days" ("project_id", "day", "plan_key", "currency", "gross_count", "gross_minor", "refunded_count", "refunded_minor",
  "disputed_count", "disputed_minor", "failed_count", "mrr_minor")
WITH pl AS MATERIALIZED (
  SELECT id, duration::interval AS d, nullif(extract(year FROM duration::interval) * 12 + extract(month FROM duration::interval)
    + (extract(day FROM duration::interval) + extract(hour FROM duration::interval) / 24) / 30.4375, 0) AS months
  FROM plans
), g AS (
  SELECT p.project_id, p.plan_id, p.currency, p.status,
    p.subscription_id IS NOT NULL AND pl.months IS NOT NULL AS recurring, pl.months,
    (p.created_at AT TIME ZONE 'UTC')::date AS cday, (greatest(p.created_at, p.updated_at) AT TIME ZONE 'UTC')::date AS uday,
    ((p.created_at + pl.d) AT TIME ZONE 'UTC')::date AS covday, coalesce(greatest(p.created_at, p.updated_at) < p.created_at + pl.d, false) AS early,
    count(*)::int AS n, sum(p.amount_minor)::bigint AS amount
  FROM payments p LEFT JOIN pl ON pl.id = p.plan_id
  GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
)
SELECT g.project_id, v.day, coalesce(g.plan_id, '00000000-0000-0000-0000-000000000000'), g.currency,
  sum(v.gc), sum(v.gm), sum(v.rc), sum(v.rm), sum(v.dc), sum(v.dm), sum(v.fc), sum(v.mrr)
FROM g
CROSS JOIN LATERAL (VALUES
  (g.status IN ('succeeded', 'refunded', 'disputed'), g.cday, g.n, g.amount, 0, 0::bigint, 0, 0::bigint, 0, 0::numeric),
  (g.status IN ('succeeded', 'refunded', 'disputed') AND g.recurring, g.cday, 0, 0::bigint, 0, 0::bigint, 0, 0::bigint, 0, g.amount / g.months),
  (g.status IN ('succeeded', 'refunded', 'disputed') AND g.recurring, g.covday, 0, 0::bigint, 0, 0::bigint, 0, 0::bigint, 0, -(g.amount / g.months)),
  (g.status = 'refunded', g.uday, 0, 0::bigint, g.n, g.amount, 0, 0::bigint, 0, 0::numeric),
  (g.status = 'disputed', g.uday, 0, 0::bigint, 0, 0::bigint, g.n, g.amount, 0, 0::numeric),
  (g.status IN ('refunded', 'disputed') AND g.recurring AND g.early, g.uday, 0, 0::bigint, 0, 0::bigint, 0, 0::bigint, 0, -(g.amount / g.months)),
  (g.status IN ('refunded', 'disputed') AND g.recurring AND g.early, g.covday, 0, 0::bigint, 0, 0::bigint, 0, 0::bigint, 0, g.amount / g.months),
  (g.status = 'failed', g.cday, 0, 0::bigint, 0, 0::bigint, 0, 0::bigint, g.n, 0::numeric)
) AS v(yes, day, gc, gm, rc, rm, dc, dm, fc, mrr)
WHERE v.yes
GROUP BY 1, 2, 3, 4;
