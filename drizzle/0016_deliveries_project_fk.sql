-- Expiry at scale: the fan-out trigger writes one delivery per event and webhook, and
-- each ran this foreign key's check, a query and a lock of the one project row, per delivery. It
-- guarded nothing the event's own key (events.project_id) does not: a delivery's project is its
-- event's, and deleting a project deletes its deliveries through their events and webhooks.
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_project_id_projects_id_fk";
