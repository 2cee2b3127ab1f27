-- revision: 20
--
-- Every function and trigger of the database, as they are now: the one place to read and change
-- them. `database.migrate()` applies this file after the migrations of this folder, under the same
-- lock, in one transaction, whenever it differs from what the database last applied (recorded in
-- drizzle.__tenure_definitions); so every statement must be repeatable: CREATE OR REPLACE.
--
-- To change a function or trigger: edit it here and add 1 to the revision above (a node running
-- older code, seeing a newer revision applied, leaves it alone instead of putting its own back).
-- No migration is needed, and the migrations that first created these (0002, 0003) stay as
-- shipped: they are history, and this file has the last word. A change CREATE OR REPLACE cannot
-- make (drop a function or trigger, rename a parameter, change a return type) needs a migration
-- that drops the old object, and then its new definition here. test/storage/definitions.test.ts
-- checks that a migrated database holds exactly what this file defines, on PGlite and PostgreSQL.
--
-- What they do (src/webhooks/README.md, docs/webhooks.md): an INSERT into `events` (always through
-- src/store/outbox.ts, in the statement of the change it reports) fans each event out to the
-- project's webhooks. Being a trigger, it holds for every writer of `events`, present and future.
-- Waking the broadcasters and the delivery workers is not done here: a pg_notify inside the
-- writing transaction serialises commits (migration 0004 dropped those triggers); the writer's
-- process signals after commit instead (src/database/wakeups.ts).
--
-- Statements are separated as in the migrations, by the breakpoint marker line.

-- The event body as webhooks carry it (docs/webhooks.md, "Events"), rendered from the event
-- row when a delivery is claimed (src/store/delivery-claim.ts). Events are never updated, and the
-- rendering depends on nothing else, so every attempt of every delivery of the event (replays too)
-- sends and signs the same bytes, and no copy of the body is stored beside the event.
-- STABLE, not IMMUTABLE: to_json and extract on a timestamptz are STABLE, and PostgreSQL inlines a
-- SQL function into the calling statement only when its body is no more volatile than declared.
-- Declared IMMUTABLE it runs as a separate call per event (an executor started for each), about
-- 4 µs more of the fan-out's cost per event, for the same bytes.
CREATE OR REPLACE FUNCTION tenure_webhook_body(event_id uuid, type text, project_id uuid, emitted_at timestamptz, data jsonb)
RETURNS text LANGUAGE sql STABLE AS $$
  SELECT '{"event_id":' || to_json(event_id)::text
      || ',"type":' || to_json(type)::text
      || ',"project_id":' || to_json(project_id)::text
      || ',"emitted_at":' || (extract(epoch FROM emitted_at) * 1000)::bigint::text
      || ',"data":' || data::text || '}'
$$;
--> statement-breakpoint
-- Events, memberships and users have no foreign key to their project (migration 0020): the key
-- checked and locked the project row once per inserted row, three times per imported membership
-- (its row, its user, its event). Each statement inserting such rows does what the key did
-- once per project instead, at its end, in a statement trigger (its cost does not grow with the
-- rows: an import chunk of 20,000 rows locks one project): it locks each project's row FOR KEY
-- SHARE, as the key's check did, and fails as the key made it fail (SQLSTATE 23503,
-- foreign_key_violation) when one is not there. So, as with the key: a delete of the project waits for
-- every transaction that wrote its rows, then deletes what they committed (tenure_project_cascade,
-- below); a writer that comes after the delete finds no row to lock and fails; connecting a
-- platform (FOR UPDATE on the project row, src/store/integrations.store.ts) waits for every
-- transaction writing the project's events. The events' trigger runs this statement itself
-- (tenure_events_inserted, below: one trigger call less on the API's most frequent write);
-- memberships and users each have a trigger naming its transition table new_rows. For a statement
-- of one row the lock costs what the key's did (pgbench, ten writers extending members: within
-- noise). project_id is never updated (no statement of src/store sets it), so only inserts are held.
CREATE OR REPLACE FUNCTION tenure_hold_projects() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (
    SELECT 1 FROM (SELECT DISTINCT n.project_id FROM new_rows n) d
    WHERE NOT EXISTS (SELECT 1 FROM projects p WHERE p.id = d.project_id FOR KEY SHARE)
  ) THEN
    RAISE foreign_key_violation USING MESSAGE = 'insert names a project that does not exist';
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER tenure_memberships_held AFTER INSERT ON memberships
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tenure_hold_projects();
--> statement-breakpoint
CREATE OR REPLACE TRIGGER tenure_users_held AFTER INSERT ON users
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tenure_hold_projects();
--> statement-breakpoint
-- After every INSERT into events, once per statement with all its new rows (an import of a thousand
-- memberships is handled in one go), in the transaction of the INSERT:
-- 0. One statement locks its projects' rows FOR KEY SHARE, as tenure_hold_projects (above) does for
--    memberships, and reads from them what the events need (migration 0022): whether someone may
--    be listening live (live_until), whether the project has had a platform connected
--    (has_integrations) or a webhook (has_webhooks). No other table is probed first: each table a
--    transaction locks past the sixteen a backend keeps to itself goes through PostgreSQL's shared
--    lock table, which concurrent writers contend on (pgbench, ten writers extending members, this
--    against probing live_audiences, integrations and webhooks in statements of their own: ~9%
--    less database CPU a transaction).
-- 1. Each event gets its row in event_broadcasts (not yet broadcast) when its project has a live
--    audience, and, when its project has connected a platform and it is not live-only, in
--    event_plan_queue (not yet read by the access planner): the two readers keep their marks there,
--    narrow rows, instead of rewriting the event (migration 0018). A project nobody listens to live
--    has nothing to broadcast, and one with no platform connected nothing to plan. Both are
--    gained the same way: connecting a platform (src/store/integrations.store.ts) and a node's
--    first live connection of the project (src/store/live-events.store.ts, holdAudience) lock the
--    project row FOR UPDATE and then change it (the integration's trigger sets has_integrations;
--    holdAudience sets live_until). A writer holding FOR KEY SHARE before makes them wait until it
--    commits (its events come before the re-plan, or the connection's admission); a writer whose
--    lock waits for them gets the changed row, PostgreSQL's rule for a locked row updated
--    meanwhile, and marks its events. A webhook is created without that lock: an event
--    written while it is created may or may not be delivered to it.
-- 2. The fan-out: one delivery per enabled webhook of its project (only the target webhook when
--    the event names one, as `webhook.test` does); the body is rendered when it is claimed.
--    Live-only events (the webhook-deliveries channel's own) are skipped: sending them to webhooks
--    would make every delivery produce another.
--
-- Most statements write events of projects without webhooks (an extend of one member, say): for
-- them the trigger is its first statement.
-- Each step reads the transition table on its own: reading it once, into a MATERIALIZED CTE
-- feeding the marks and the probe in one statement, measured an extend's database CPU 15-20%
-- higher (the per-request bench), for no clear gain on large statements.
CREATE OR REPLACE FUNCTION tenure_events_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  missing boolean;
  heard boolean;
  planned boolean;
  fanned boolean;
BEGIN
  SELECT bool_or(h.id IS NULL), bool_or(h.live_until > now()),
         bool_or(h.has_integrations AND d.durable), bool_or(h.has_webhooks AND d.durable)
    INTO missing, heard, planned, fanned
  FROM (SELECT e.project_id, bool_or(NOT e.live_only) AS durable FROM new_events e GROUP BY e.project_id) d
  LEFT JOIN LATERAL (
    SELECT p.id, p.live_until, p.has_integrations, p.has_webhooks FROM projects p WHERE p.id = d.project_id FOR KEY SHARE
  ) h ON true;
  IF missing THEN
    RAISE foreign_key_violation USING MESSAGE = 'insert names a project that does not exist';
  END IF;
  IF heard THEN
    INSERT INTO event_broadcasts (seq)
    SELECT e.seq FROM new_events e JOIN projects p ON p.id = e.project_id WHERE p.live_until > now();
  END IF;
  IF planned THEN
    INSERT INTO event_plan_queue (seq)
    SELECT e.seq FROM new_events e
    WHERE NOT e.live_only AND EXISTS (SELECT 1 FROM integrations i WHERE i.project_id = e.project_id);
  END IF;
  IF NOT fanned THEN
    RETURN NULL;
  END IF;
  WITH hooks AS (
    -- Each enabled webhook of the events' projects, locked once for the statement (not once per
    -- event): FOR KEY SHARE, so a webhook deleted concurrently is skipped, and one deleted after
    -- waits for this transaction, then deletes the deliveries written here (tenure_webhook_cascade).
    SELECT w.id, w.project_id FROM webhooks w
    WHERE w.project_id IN (SELECT e.project_id FROM new_events e WHERE NOT e.live_only) AND w.enabled
    FOR KEY SHARE
  )
  INSERT INTO webhook_deliveries (project_id, webhook_id, event_id)
  SELECT e.project_id, h.id, e.id
  FROM new_events e JOIN hooks h ON h.project_id = e.project_id
  WHERE NOT e.live_only AND (e.target_webhook_id IS NULL OR h.id = e.target_webhook_id);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER tenure_events_inserted AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION tenure_events_inserted();
--> statement-breakpoint
-- The project's flags read by tenure_events_inserted (migration 0022), set in the statement that
-- inserts its first integration or webhook, whoever writes it. Never cleared: a project that had
-- one and has none left only runs a statement that finds nothing to write, while clearing the flag
-- could race a concurrent insert and leave it false beside a new integration.
CREATE OR REPLACE FUNCTION tenure_integrations_flag() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE projects p SET has_integrations = true
  WHERE p.id IN (SELECT n.project_id FROM new_rows n) AND NOT p.has_integrations;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER tenure_integrations_flag AFTER INSERT ON integrations
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tenure_integrations_flag();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION tenure_webhooks_flag() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE projects p SET has_webhooks = true
  WHERE p.id IN (SELECT n.project_id FROM new_rows n) AND NOT p.has_webhooks;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER tenure_webhooks_flag AFTER INSERT ON webhooks
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tenure_webhooks_flag();
--> statement-breakpoint
-- What the foreign keys from deliveries to events and webhooks did on delete, without their checks
-- on insert (migration 0017; src/webhooks/README.md "What a fanned-out event costs"): deleting
-- events (pruned, or with their project) deletes their deliveries (and their rows in
-- event_broadcasts and event_plan_queue, which never had a foreign key), and deleting a webhook
-- deletes its deliveries, in the same statement's transaction. Every writer of a delivery holds
-- its event and webhook while it writes, so none is written for one
-- being deleted: the fan-out writes for the events of its own statement and locks each webhook
-- FOR KEY SHARE, replays (src/store/delivery-log.store.ts) lock the webhook FOR NO KEY UPDATE and
-- the events FOR KEY SHARE; a delete waits for them, then these see what they wrote.
CREATE OR REPLACE FUNCTION tenure_event_cascade() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM webhook_deliveries d WHERE d.event_id IN (SELECT o.id FROM old_events o);
  DELETE FROM event_broadcasts b WHERE b.seq IN (SELECT o.seq FROM old_events o);
  DELETE FROM event_plan_queue q WHERE q.seq IN (SELECT o.seq FROM old_events o);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER tenure_event_cascade AFTER DELETE ON events
  REFERENCING OLD TABLE AS old_events
  FOR EACH STATEMENT EXECUTE FUNCTION tenure_event_cascade();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION tenure_webhook_cascade() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM webhook_deliveries d WHERE d.webhook_id IN (SELECT o.id FROM old_webhooks o);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER tenure_webhook_cascade AFTER DELETE ON webhooks
  REFERENCING OLD TABLE AS old_webhooks
  FOR EACH STATEMENT EXECUTE FUNCTION tenure_webhook_cascade();
--> statement-breakpoint
-- Deleting a project deletes its events, memberships and users, as their foreign keys' ON DELETE
-- CASCADE did, in statements of their own after the delete's (so they see what the writers the
-- delete waited for committed). Deleting the events deletes their deliveries and marks
-- (tenure_event_cascade). The project's other rows go through their foreign keys.
CREATE OR REPLACE FUNCTION tenure_project_cascade() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM events e WHERE e.project_id IN (SELECT o.id FROM old_projects o);
  DELETE FROM memberships m WHERE m.project_id IN (SELECT o.id FROM old_projects o);
  DELETE FROM users u WHERE u.project_id IN (SELECT o.id FROM old_projects o);
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER tenure_project_cascade AFTER DELETE ON projects
  REFERENCING OLD TABLE AS old_projects
  FOR EACH STATEMENT EXECUTE FUNCTION tenure_project_cascade();
--> statement-breakpoint
-- Money and growth (docs/analytics.md): every change of a membership's dates or plan, and of a
-- payment's status, appends its facts to analytics_days in the statement that made it, for every
-- writer (the API, Stripe's events, the bulk extend's batches, the import's COPY, the sweeper), so
-- nothing is lost or counted twice. Rows are only appended (folded = false); a read folds them.
--
-- A membership is one row whose dates move, so its history is booked, not recomputed: the row
-- stands for the box [start_date, end_date) (a member from its start, gone at its end). A change
-- at instant p (the row's new updated_at; the statement's now() for a delete) keeps what was booked
-- before p and replaces what was booked from p on: the old box's scheduled start and end after p
-- are taken back, the new box's are booked, and at p itself the member goes from the old state to
-- the new one (ended, started, or moved from one plan to another: -1 started on one, +1 on the
-- other). A membership extended within 3 days of its end (a renewal Stripe charges an hour late,
-- a member who paid again the next day) continues: its booked end is taken back instead of a new
-- start booked, so it is neither churned nor new. An insert (p = -infinity) books its box whole.
-- This row function gives the bookings of one change: (instant, plan key, started, ended). Its
-- nine candidates are parallel arrays unnested, not a VALUES list: called once per changed row
-- (LATERAL), a VALUES list builds its expressions afresh on every call, which made this trigger
-- 4-7 times slower over a batch of 1,000 (EXPLAIN ANALYZE's trigger time, docs/memberships.md).
CREATE OR REPLACE FUNCTION tenure_analytics_member_rows(a1 timestamptz, b1 timestamptz, k1 uuid, a2 timestamptz, b2 timestamptz, k2 uuid, p timestamptz, cont boolean)
RETURNS TABLE (ts timestamptz, plan_key uuid, started integer, ended integer) LANGUAGE sql IMMUTABLE AS $$
  SELECT v.ts, v.plan_key, v.started, v.ended FROM unnest(
    ARRAY[a1 < b1 AND b1 > p, a1 < b1 AND a1 > p, cont, a2 < b2 AND b2 > p, a2 < b2 AND a2 > p,
      (cont OR (a1 <= p AND p < b1)) AND (a2 <= p AND p < b2) AND k1 <> k2,
      (cont OR (a1 <= p AND p < b1)) AND (a2 <= p AND p < b2) AND k1 <> k2,
      (cont OR (a1 <= p AND p < b1)) AND NOT coalesce(a2 <= p AND p < b2, false),
      NOT coalesce(cont OR (a1 <= p AND p < b1), false) AND (a2 <= p AND p < b2)],
    ARRAY[b1, a1, b1, b2, a2, p, p, p, p],
    ARRAY[k1, k1, k1, k2, k2, k1, k2, k1, k2],
    ARRAY[0, -1, 0, 0, 1, -1, 1, 0, 1],
    ARRAY[-1, 0, -1, 1, 0, 0, 0, 1, 0]
  ) AS v(yes, ts, plan_key, started, ended)
  WHERE v.yes
$$;
--> statement-breakpoint
-- The memberships' bookings of one statement, summed per project and UTC day (under the zero plan
-- key: the figures count members, not members per plan, and a view then reads a row a day). Updates and
-- deletes skip a project that no longer exists (its deletion's cascade updates and deletes its
-- memberships after its analytics rows went with it).
CREATE OR REPLACE FUNCTION tenure_analytics_memberships() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO analytics_days (project_id, day, plan_key, currency, members_started, members_ended)
    SELECT n.project_id, (b.ts AT TIME ZONE 'UTC')::date AS day, b.plan_key, '', sum(b.started), sum(b.ended)
    FROM new_rows n
    CROSS JOIN LATERAL tenure_analytics_member_rows(NULL, NULL, NULL, n.start_date, n.end_date, '00000000-0000-0000-0000-000000000000', '-infinity', false) b
    GROUP BY 1, 2, 3 HAVING sum(b.started) <> 0 OR sum(b.ended) <> 0;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO analytics_days (project_id, day, plan_key, currency, members_started, members_ended)
    SELECT c.project_id, (b.ts AT TIME ZONE 'UTC')::date AS day, b.plan_key, '', sum(b.started), sum(b.ended)
    FROM (
      SELECT n.project_id, o.start_date AS a1, o.end_date AS b1, '00000000-0000-0000-0000-000000000000'::uuid AS k1,
        n.start_date AS a2, n.end_date AS b2, '00000000-0000-0000-0000-000000000000'::uuid AS k2,
        n.updated_at AS t,
        (o.start_date < o.end_date AND o.end_date <= n.updated_at AND n.updated_at <= o.end_date + interval '3 days' AND n.end_date > n.updated_at) AS cont
      FROM old_rows o JOIN new_rows n ON n.id = o.id
      WHERE (o.start_date, o.end_date) IS DISTINCT FROM (n.start_date, n.end_date)
    ) c
    CROSS JOIN LATERAL tenure_analytics_member_rows(c.a1, c.b1, c.k1, c.a2, c.b2, c.k2, CASE WHEN c.cont THEN c.b1 ELSE c.t END, c.cont) b
    WHERE EXISTS (SELECT 1 FROM projects pr WHERE pr.id = c.project_id)
    GROUP BY 1, 2, 3 HAVING sum(b.started) <> 0 OR sum(b.ended) <> 0;
  ELSE
    INSERT INTO analytics_days (project_id, day, plan_key, currency, members_started, members_ended)
    SELECT o.project_id, (b.ts AT TIME ZONE 'UTC')::date AS day, b.plan_key, '', sum(b.started), sum(b.ended)
    FROM old_rows o
    CROSS JOIN LATERAL tenure_analytics_member_rows(o.start_date, o.end_date, '00000000-0000-0000-0000-000000000000', NULL, NULL, NULL, now(), false) b
    WHERE EXISTS (SELECT 1 FROM projects pr WHERE pr.id = o.project_id)
    GROUP BY 1, 2, 3 HAVING sum(b.started) <> 0 OR sum(b.ended) <> 0;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER tenure_analytics_memberships_ins AFTER INSERT ON memberships
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tenure_analytics_memberships();
--> statement-breakpoint
CREATE OR REPLACE TRIGGER tenure_analytics_memberships_upd AFTER UPDATE ON memberships
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tenure_analytics_memberships();
--> statement-breakpoint
CREATE OR REPLACE TRIGGER tenure_analytics_memberships_del AFTER DELETE ON memberships
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tenure_analytics_memberships();
--> statement-breakpoint
-- How many memberships each project holds (docs/memberships.md, "Listing and filtering"): every
-- statement that inserts or deletes memberships appends its change per project to
-- membership_counts, for every writer (the API, the import's COPY, a project's deletion); the
-- list's count folds the appended rows and sums (src/store/membership-counts.ts). A delete skips a
-- project that no longer exists (its deletion's cascade deletes its memberships after its counts
-- went with it). Migration 0048 counted what was there before.
CREATE OR REPLACE FUNCTION tenure_membership_counts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO membership_counts (project_id, memberships)
    SELECT n.project_id, count(*) FROM new_rows n GROUP BY 1;
  ELSE
    INSERT INTO membership_counts (project_id, memberships)
    SELECT o.project_id, -count(*) FROM old_rows o
    WHERE EXISTS (SELECT 1 FROM projects pr WHERE pr.id = o.project_id)
    GROUP BY 1;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER tenure_membership_counts_ins AFTER INSERT ON memberships
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tenure_membership_counts();
--> statement-breakpoint
CREATE OR REPLACE TRIGGER tenure_membership_counts_del AFTER DELETE ON memberships
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tenure_membership_counts();
--> statement-breakpoint
-- A payment's facts, booked when its status moves (o_status null for an insert): its amount as
-- gross on the day it succeeded (its created_at when recorded succeeded, else the day the failed
-- payment was paid), as refunded or disputed on the day it was reversed (updated_at), a failure on
-- the day it was first recorded failed. A subscription's payment adds its amount, normalised to a
-- month (months = years * 12 + months + days / 30.4375 of the plan's duration), to MRR over the
-- period it pays for, [created_at, created_at + duration); a reversal takes back the rest of it.
CREATE OR REPLACE FUNCTION tenure_analytics_months(duration text) RETURNS numeric LANGUAGE sql IMMUTABLE AS $$
  SELECT nullif(extract(year FROM duration::interval) * 12 + extract(month FROM duration::interval)
    + (extract(day FROM duration::interval) + extract(hour FROM duration::interval) / 24) / 30.4375, 0)
$$;
--> statement-breakpoint
-- One SELECT (no CTE), so that PostgreSQL inlines it into the trigger's statement. monthly: the
-- payment's amount a month, covered: the end of the period it pays for; both null unless it is a
-- subscription's payment of a known plan. The trigger works them out from the plan once per plan,
-- not per row: a bulk insert of 200,000 payments took 54 s with the interval parsed per row, 24 s
-- with this function called per row, against 11 s without the trigger (on a loaded 2-core machine).
CREATE OR REPLACE FUNCTION tenure_analytics_payment_facts(o_status text, n_status text, created timestamptz, updated timestamptz,
  amount bigint, monthly numeric, covered timestamptz)
RETURNS TABLE (ts timestamptz, gross_count integer, gross_minor bigint, refunded_count integer, refunded_minor bigint,
  disputed_count integer, disputed_minor bigint, failed_count integer, mrr_minor numeric) LANGUAGE sql IMMUTABLE AS $$
  SELECT v.ts, v.gc, v.gm, v.rc, v.rm, v.dc, v.dm, v.fc, v.mrr FROM (VALUES
    (n_status IN ('succeeded', 'refunded', 'disputed') AND (o_status IS NULL OR o_status = 'failed'),
      CASE WHEN o_status IS NULL THEN created ELSE updated END, 1, amount, 0, 0::bigint, 0, 0::bigint, 0, 0::numeric),
    (n_status IN ('succeeded', 'refunded', 'disputed') AND (o_status IS NULL OR o_status = 'failed') AND monthly IS NOT NULL,
      created, 0, 0::bigint, 0, 0::bigint, 0, 0::bigint, 0, monthly),
    (n_status IN ('succeeded', 'refunded', 'disputed') AND (o_status IS NULL OR o_status = 'failed') AND monthly IS NOT NULL,
      covered, 0, 0::bigint, 0, 0::bigint, 0, 0::bigint, 0, -monthly),
    (n_status = 'refunded' AND (o_status IS NULL OR o_status NOT IN ('refunded', 'disputed')),
      updated, 0, 0::bigint, 1, amount, 0, 0::bigint, 0, 0::numeric),
    (n_status = 'disputed' AND (o_status IS NULL OR o_status NOT IN ('refunded', 'disputed')),
      updated, 0, 0::bigint, 0, 0::bigint, 1, amount, 0, 0::numeric),
    (n_status IN ('refunded', 'disputed') AND (o_status IS NULL OR o_status NOT IN ('refunded', 'disputed')) AND monthly IS NOT NULL
      AND greatest(created, updated) < covered, greatest(created, updated), 0, 0::bigint, 0, 0::bigint, 0, 0::bigint, 0, -monthly),
    (n_status IN ('refunded', 'disputed') AND (o_status IS NULL OR o_status NOT IN ('refunded', 'disputed')) AND monthly IS NOT NULL
      AND greatest(created, updated) < covered, covered, 0, 0::bigint, 0, 0::bigint, 0, 0::bigint, 0, monthly),
    (o_status IS NULL AND n_status = 'failed', created, 0, 0::bigint, 0, 0::bigint, 0, 0::bigint, 1, 0::numeric)
  ) AS v(yes, ts, gc, gm, rc, rm, dc, dm, fc, mrr)
  WHERE v.yes
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION tenure_analytics_payments() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO analytics_days (project_id, day, plan_key, currency, gross_count, gross_minor, refunded_count, refunded_minor,
      disputed_count, disputed_minor, failed_count, mrr_minor)
    SELECT n.project_id, (b.ts AT TIME ZONE 'UTC')::date AS day, coalesce(n.plan_id, '00000000-0000-0000-0000-000000000000'), n.currency,
      sum(b.gross_count), sum(b.gross_minor), sum(b.refunded_count), sum(b.refunded_minor),
      sum(b.disputed_count), sum(b.disputed_minor), sum(b.failed_count), sum(b.mrr_minor)
    FROM new_rows n
    LEFT JOIN (
      -- OFFSET 0: worked out here, once per plan, not pulled up into the join and worked out per row.
      SELECT id, duration::interval AS d, tenure_analytics_months(duration) AS months FROM plans WHERE id IN (SELECT plan_id FROM new_rows) OFFSET 0
    ) pl ON pl.id = n.plan_id
    CROSS JOIN LATERAL (SELECT CASE WHEN n.subscription_id IS NOT NULL THEN n.amount_minor / pl.months END AS monthly,
      CASE WHEN n.subscription_id IS NOT NULL THEN n.created_at + pl.d END AS covered) x
    CROSS JOIN LATERAL tenure_analytics_payment_facts(NULL, n.status, n.created_at, n.updated_at, n.amount_minor, x.monthly, x.covered) b
    GROUP BY 1, 2, 3, 4;
  ELSE
    INSERT INTO analytics_days (project_id, day, plan_key, currency, gross_count, gross_minor, refunded_count, refunded_minor,
      disputed_count, disputed_minor, failed_count, mrr_minor)
    SELECT n.project_id, (b.ts AT TIME ZONE 'UTC')::date AS day, coalesce(n.plan_id, '00000000-0000-0000-0000-000000000000'), n.currency,
      sum(b.gross_count), sum(b.gross_minor), sum(b.refunded_count), sum(b.refunded_minor),
      sum(b.disputed_count), sum(b.disputed_minor), sum(b.failed_count), sum(b.mrr_minor)
    FROM old_rows o JOIN new_rows n ON n.id = o.id
    LEFT JOIN (
      -- OFFSET 0: worked out here, once per plan, not pulled up into the join and worked out per row.
      SELECT id, duration::interval AS d, tenure_analytics_months(duration) AS months FROM plans WHERE id IN (SELECT plan_id FROM new_rows) OFFSET 0
    ) pl ON pl.id = n.plan_id
    CROSS JOIN LATERAL (SELECT CASE WHEN n.subscription_id IS NOT NULL THEN n.amount_minor / pl.months END AS monthly,
      CASE WHEN n.subscription_id IS NOT NULL THEN n.created_at + pl.d END AS covered) x
    CROSS JOIN LATERAL tenure_analytics_payment_facts(o.status, n.status, n.created_at, n.updated_at, n.amount_minor, x.monthly, x.covered) b
    WHERE o.status <> n.status AND EXISTS (SELECT 1 FROM projects pr WHERE pr.id = n.project_id)
    GROUP BY 1, 2, 3, 4;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER tenure_analytics_payments_ins AFTER INSERT ON payments
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tenure_analytics_payments();
--> statement-breakpoint
CREATE OR REPLACE TRIGGER tenure_analytics_payments_upd AFTER UPDATE ON payments
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tenure_analytics_payments();
