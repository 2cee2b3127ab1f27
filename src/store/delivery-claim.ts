import { sql, type SQL } from 'drizzle-orm';
import { rowsOf, type Db } from '../database/db.js';
import { webhookBody } from './outbox.js';

/**
 * The claim of due webhook deliveries, fair across endpoints and projects (docs/webhooks.md,
 * "Fairness"). One statement, the same on PGlite and PostgreSQL:
 *
 * 1. Which endpoints have due deliveries: a walk over the endpoints that have pending deliveries,
 *    one step each through `webhook_deliveries_endpoint_due_idx` (one index descent, whatever
 *    their queues hold), from where the worker's last claim stopped (`cursor`), until it has
 *    found `limit` endpoints with due deliveries and room, or looked at `4 × limit`. A lap runs
 *    from the first endpoint to the last over as many claims as it takes, so every endpoint is
 *    looked at once per lap and no backlog, however long, hides another endpoint's deliveries
 *    (a scan in due order would read past all of it, on every claim).
 * 2. Each such endpoint's due deliveries, oldest first, from its own part of that index: at most
 *    its room (`perEndpoint` less what this worker holds there) and its share of the claim.
 * 3. Taken in turns: every project's first, then every project's second…, and within a project
 *    every endpoint's first, then every endpoint's second…; no project beyond its room
 *    (`perProject` less what this worker holds of it). Endpoints and projects at their bound are
 *    skipped in the statement itself.
 * 4. Locked with `SKIP LOCKED` (workers on other nodes claim past each other) and leased: their
 *    `next_attempt_at` moves to the lease's end, so a worker that dies leaves them due again then.
 */

export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  projectId: string;
  eventId: string;
  eventType: string;
  /** This attempt's number (1-based); also the lease's fencing token. */
  attempt: number;
  /** What this attempt sends and signs: `webhookBody` of its event (outbox.ts). */
  body: string;
  url: string;
  /**
   * The signing secrets as stored (sealed with the instance's key, or as they are where it has
   * none: src/domain/webhooks/webhook-secrets.ts opens them): current first, then a rotated-out
   * one still within its grace period.
   */
  storedSecrets: string[];
  enabled: boolean;
}

export interface ClaimOptions {
  workerId: string;
  now: Date;
  leaseUntil: Date;
  limit: number;
  /** Deliveries of one webhook this worker may hold claimed, counting `inFlight`. */
  perEndpoint: number;
  /** Claimed and not yet answered by this worker, per webhook. */
  inFlight: ReadonlyMap<string, number>;
  /** Deliveries of one project this worker may hold claimed, counting `projectsInFlight`. */
  perProject: number;
  /** Claimed and not yet answered by this worker, per project. */
  projectsInFlight: ReadonlyMap<string, number>;
  /** Where the walk over endpoints resumes: the `cursor` of the last claim; null (or left out): from the first. */
  cursor?: string | null;
}

export interface Claim {
  deliveries: ClaimedDelivery[];
  /** Where the next claim's walk resumes; null when this one went to the last endpoint. */
  cursor: string | null;
}

/** Endpoints the walk looks at per claim, in multiples of `limit`. */
const WALK_ROUNDS = 4;
/** Before every webhook id (gen_random_uuid never makes it): where a lap starts. */
const NIL = sql`'00000000-0000-0000-0000-000000000000'::uuid`;

const counts = (m: ReadonlyMap<string, number>) => ({ ids: sql.param([...m.keys()]), ns: sql.param([...m.values()]) });
/** What the worker holds of `id`, looked up in `counts`' two arrays. */
const held = (c: ReturnType<typeof counts>, id: SQL) => sql`coalesce((${c.ns}::int[])[array_position(${c.ids}::uuid[], ${id})], 0)`;
const atBound = (m: ReadonlyMap<string, number>, bound: number) => sql.param([...m].filter(([, n]) => n >= bound).map(([id]) => id));

export async function claimDue(db: Db, o: ClaimOptions): Promise<Claim> {
  const now = sql`${o.now}::timestamptz`;
  const endpoints = counts(o.inFlight);
  const projects = counts(o.projectsInFlight);
  const fullEndpoints = atBound(o.inFlight, o.perEndpoint);
  const fullProjects = atBound(o.projectsInFlight, o.perProject);
  /** A due head of an endpoint this worker may claim more of. */
  const open = (alias: string): SQL =>
    sql`(${sql.raw(alias)}.webhook_id <> ALL(${fullEndpoints}::uuid[]) AND ${sql.raw(alias)}.project_id <> ALL(${fullProjects}::uuid[]))`;
  /** The first pending delivery of the first endpoint after `after` (the index's order), as the walk steps. */
  const stepAfter = (after: SQL) => sql`
    SELECT d.webhook_id, d.project_id, d.next_attempt_at AS head FROM webhook_deliveries d
    WHERE d.status = 'pending' AND d.webhook_id > ${after} ORDER BY d.webhook_id, d.next_attempt_at LIMIT 1`;
  const walkEnd = sql`w.n >= ${o.limit * WALK_ROUNDS}::int OR w.found >= ${o.limit}::int`;
  const result = await db.execute(sql`
    WITH RECURSIVE walk AS (
      SELECT s.webhook_id, s.project_id, s.head, 1 AS n, (s.head <= ${now} AND ${open('s')})::int AS found
      FROM (${stepAfter(sql`coalesce(${o.cursor ?? null}::uuid, ${NIL})`)}) s
      UNION ALL
      SELECT x.webhook_id, x.project_id, x.head, w.n + 1, w.found + (x.head <= ${now} AND ${open('x')})::int
      FROM walk w CROSS JOIN LATERAL (${stepAfter(sql`w.webhook_id`)}) x
      WHERE NOT (${walkEnd})
    ), due AS (
      SELECT w.webhook_id, w.project_id, ${o.perEndpoint}::int - ${held(endpoints, sql`w.webhook_id`)} AS room,
             count(*) OVER (PARTITION BY w.project_id) AS siblings, count(*) OVER () AS endpoints
      FROM walk w
      WHERE w.head <= ${now} AND ${open('w')}
    ), share AS (
      -- A project's share of the claim, to split among its endpoints with due deliveries.
      SELECT ceil(${o.limit}::numeric / nullif(count(DISTINCT project_id), 0)) AS per_project FROM due
    ), candidates AS (
      -- The subquery's ORDER BY and LIMIT come first, so only this endpoint's part of the index
      -- can serve it (the due index would read past every other endpoint's deliveries).
      SELECT c.id, c.project_id, c.next_attempt_at,
             row_number() OVER (PARTITION BY e.webhook_id ORDER BY c.next_attempt_at, c.id) AS turn
      FROM due e CROSS JOIN share CROSS JOIN LATERAL (
        SELECT r.id, r.project_id, r.next_attempt_at FROM (
          SELECT d.id, d.webhook_id, d.project_id, d.next_attempt_at FROM webhook_deliveries d
          WHERE d.status = 'pending' AND (d.webhook_id, d.next_attempt_at) >= (e.webhook_id, '-infinity'::timestamptz)
          ORDER BY d.webhook_id, d.next_attempt_at
          LIMIT least(e.room, greatest(ceil(share.per_project / e.siblings), ceil(${o.limit}::numeric / e.endpoints))::int)
        ) r
        WHERE r.webhook_id = e.webhook_id AND r.next_attempt_at <= ${now}
      ) c
    ), picked AS (
      SELECT c.id FROM (
        SELECT c.*, row_number() OVER (PARTITION BY c.project_id ORDER BY c.turn, c.next_attempt_at, c.id) AS project_turn
        FROM candidates c
      ) c
      WHERE c.project_turn <= ${o.perProject}::int - ${held(projects, sql`c.project_id`)}
      ORDER BY c.project_turn, c.turn, c.next_attempt_at
      LIMIT ${o.limit}
    ), locked AS (
      SELECT d.id FROM webhook_deliveries d
      WHERE d.id IN (SELECT id FROM picked) AND d.status = 'pending' AND d.next_attempt_at <= ${now}
      FOR UPDATE SKIP LOCKED
    ), claimed AS (
      UPDATE webhook_deliveries d
      SET attempts = d.attempts + 1, next_attempt_at = ${o.leaseUntil}::timestamptz, leased_by = ${o.workerId}, updated_at = ${now}
      FROM locked WHERE d.id = locked.id
      RETURNING d.id, d.webhook_id, d.project_id, d.event_id, d.attempts
    )
    SELECT (SELECT w.webhook_id FROM walk w WHERE ${walkEnd}) AS cursor,
           c.id, c.webhook_id, c.project_id, c.event_id, c.attempts AS attempt, e.type AS event_type,
           ${webhookBody('e')} AS body, w.url, w.enabled,
           w.secret, CASE WHEN w.previous_secret_expires_at > ${now} THEN w.previous_secret END AS previous_secret
    FROM (SELECT 1) one
    LEFT JOIN (claimed c
      JOIN webhooks w ON w.id = c.webhook_id
      JOIN events e ON e.id = c.event_id) ON true`);
  const rows = rowsOf<{
    cursor: string | null;
    id: string | null;
    webhook_id: string;
    project_id: string;
    event_id: string;
    attempt: number;
    event_type: string;
    body: string;
    url: string;
    enabled: boolean;
    secret: string;
    previous_secret: string | null;
  }>(result);
  return {
    cursor: rows[0]?.cursor ?? null,
    deliveries: rows.flatMap((r) =>
      r.id === null
        ? []
        : [
            {
              id: r.id,
              webhookId: r.webhook_id,
              projectId: r.project_id,
              eventId: r.event_id,
              eventType: r.event_type,
              attempt: r.attempt,
              body: r.body,
              url: r.url,
              storedSecrets: r.previous_secret ? [r.secret, r.previous_secret] : [r.secret],
              enabled: r.enabled,
            },
          ],
    ),
  };
}
