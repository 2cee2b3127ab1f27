import { sql } from 'drizzle-orm';
import { rowsOf, type Db } from '../database/db.js';

/**
 * Installation-wide secrets (`instance_secrets`): the first node to need one creates it, every
 * other node reads the same value. One statement, so two nodes starting at once agree.
 */
export class InstanceSecretsStore {
  constructor(private readonly db: Db) {}

  /** The secret called `name`, stored as `candidate` when there is none yet. */
  async getOrCreate(name: string, candidate: string): Promise<string> {
    // A node that lost the race waited for the winner's commit, but its statement's snapshot may
    // predate it and see no row: the second try, a new statement, sees it.
    for (let tries = 0; tries < 3; tries++) {
      const value = await this.tryGetOrCreate(name, candidate);
      if (value !== undefined) return value;
    }
    throw new Error(`instance secret ${name} could not be read`);
  }

  private async tryGetOrCreate(name: string, candidate: string): Promise<string | undefined> {
    const result = await this.db.execute(sql`
      WITH ins AS (
        INSERT INTO instance_secrets (name, value) VALUES (${name}, ${candidate})
        ON CONFLICT (name) DO NOTHING
        RETURNING value
      )
      SELECT value FROM ins
      UNION ALL
      SELECT value FROM instance_secrets WHERE name = ${name} AND NOT EXISTS (SELECT 1 FROM ins)`);
    return rowsOf<{ value: string }>(result)[0]?.value;
  }
}
