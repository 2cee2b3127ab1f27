import { sql } from 'drizzle-orm';
import { loadConfig } from '../../src/config.js';
import { createContainer } from '../../src/container.js';
import { createLogger } from '../../src/logger.js';
import type { Database } from '../../src/database/db.js';

/** A seeded project: its id, an API key for it, and its members' user ids ("1" … String(members)). */
export interface Tenant {
  projectId: string;
  key: string;
  members: number;
}

/**
 * Creates a project and key through the service layer (as `npx tenure project/key create` does),
 * then `members` memberships in one INSERT … SELECT generate_series. Half of them are expired, so
 * an extend also reactivates, as in real use.
 */
export async function seedTenant(database: Database, name: string, members: number): Promise<Tenant> {
  const { projects } = (await createContainer({ config: loadConfig({}), logger: createLogger('silent'), database })).services;
  const project = await projects.createProject(name);
  if (!project.ok) throw project.error;
  const key = await projects.createKey(project.value.id, 'bench', 'bench');
  if (!key.ok) throw key.error;
  await database.db.execute(sql`
    INSERT INTO memberships (project_id, user_id, end_date, status)
    SELECT ${project.value.id}, g::text,
           now() + CASE WHEN g % 2 = 0 THEN interval '30 days' ELSE interval '-30 days' END,
           CASE WHEN g % 2 = 0 THEN 'active' ELSE 'expired' END
    FROM generate_series(1, ${members}::int) AS g`);
  return { projectId: project.value.id, key: key.value.key, members };
}
