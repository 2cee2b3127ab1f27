import { sql, type SQL } from 'drizzle-orm';

/**
 * The hold on a project's rows (drizzle/functions.sql, tenure_hold_projects): every statement
 * inserting events, memberships or users of a project takes this advisory lock shared, in the
 * two-key form (a class of its own beside the payment intents' and the planner's one-key lock),
 * keyed by the project's uuid_hash. Taken exclusively, it waits for every transaction that wrote
 * the project's rows and makes the writers that come after wait until it commits. Deleting a
 * project takes it in a trigger (tenure_project_deleting); connecting a platform takes it here.
 */
export const PROJECT_HOLD_LOCK = 734_622_104;

/** The exclusive hold on `projectId` until the transaction ends, as a value-less expression for a statement. */
export function holdProjectExclusively(projectId: string | SQL): SQL {
  return sql`pg_advisory_xact_lock(${PROJECT_HOLD_LOCK}::int, uuid_hash(${projectId}::uuid))`;
}
