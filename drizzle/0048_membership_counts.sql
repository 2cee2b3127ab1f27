CREATE TABLE "membership_counts" (
	"project_id" uuid NOT NULL,
	"folded" boolean DEFAULT false NOT NULL,
	"memberships" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "membership_counts" ADD CONSTRAINT "membership_counts_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "membership_counts_folded_key" ON "membership_counts" USING btree ("project_id") WHERE folded;--> statement-breakpoint
CREATE INDEX "membership_counts_appended_idx" ON "membership_counts" USING btree ("project_id") WHERE NOT folded;--> statement-breakpoint
-- Each project's count as it stands (docs/memberships.md, "Listing and filtering"), and the
-- triggers that keep it from here on, in this migration's transaction with the memberships held
-- against writers meanwhile, so no insert or delete falls between the count and its trigger.
-- drizzle/functions.sql defines the same function and triggers and has the last word.
LOCK TABLE "memberships" IN SHARE ROW EXCLUSIVE MODE;
--> statement-breakpoint
INSERT INTO "membership_counts" ("project_id", "folded", "memberships")
SELECT m.project_id, true, count(*) FROM memberships m
WHERE EXISTS (SELECT 1 FROM projects p WHERE p.id = m.project_id)
GROUP BY m.project_id;
--> statement-breakpoint
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
