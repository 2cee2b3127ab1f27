-- Webhook fan-out (src/webhooks/README.md). Every statement that inserts events also, in the same
-- transaction, stores each event's body once and creates one delivery per target webhook, then
-- wakes the workers. Being a trigger, it holds for every writer of `events`, present and future.

-- The event body as webhooks carry it (docs/webhooks.md, "Events"), built once: these exact
-- bytes are sent and signed on every attempt of every delivery of the event.
CREATE FUNCTION tenure_webhook_body(event_id uuid, type text, project_id uuid, emitted_at timestamptz, data jsonb)
RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT '{"event_id":' || to_json(event_id)::text
      || ',"type":' || to_json(type)::text
      || ',"project_id":' || to_json(project_id)::text
      || ',"emitted_at":' || (extract(epoch FROM emitted_at) * 1000)::bigint::text
      || ',"data":' || data::text || '}'
$$;
--> statement-breakpoint
CREATE FUNCTION tenure_webhook_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  WITH targets AS (
    SELECT e.id AS event_id, e.project_id, e.type, e.emitted_at, e.data, w.id AS webhook_id
    FROM new_events e
    -- FOR KEY SHARE: a webhook deleted concurrently is skipped, instead of failing the event's
    -- whole transaction on the deliveries' foreign key.
    CROSS JOIN LATERAL (
      SELECT w.id FROM webhooks w
      WHERE w.project_id = e.project_id AND w.enabled
        AND (e.target_webhook_id IS NULL OR w.id = e.target_webhook_id)
      FOR KEY SHARE
    ) w
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
CREATE TRIGGER tenure_webhook_fan_out AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION tenure_webhook_fan_out();
--> statement-breakpoint
-- New deliveries (from the fan-out or a replay) wake the workers: LISTEN on PostgreSQL, PGlite's
-- in-process notification callback on embedded storage. Delivered at commit, never before.
CREATE FUNCTION tenure_webhook_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM new_deliveries) THEN
    PERFORM pg_notify('tenure_webhook_deliveries', '');
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER tenure_webhook_wake AFTER INSERT ON webhook_deliveries
  REFERENCING NEW TABLE AS new_deliveries
  FOR EACH STATEMENT EXECUTE FUNCTION tenure_webhook_wake();
