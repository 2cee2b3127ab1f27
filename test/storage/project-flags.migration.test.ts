import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'drizzle-orm';
import { expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { emptyDatabase, migrateHistoryOnly } from '../support/empty-database.js';

/**
 * Migration 0022 moved what the events' trigger must know about a project onto its row
 * (drizzle/functions.sql, tenure_events_inserted): a database migrated before it holds projects
 * with integrations and webhooks already, and its flags must say so, or their events would go
 * unplanned and undelivered.
 */

const migrationsFolder = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** The migrations folder as it was before `tag`: a copy with it and what follows left out. */
function migrationsBefore(tag: string): { folder: string; remove: () => void } {
  const folder = mkdtempSync(path.join(tmpdir(), 'tenure-migrations-'));
  cpSync(migrationsFolder, folder, { recursive: true });
  const journalPath = path.join(folder, 'meta/_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { tag: string }[] };
  const cut = journal.entries.findIndex((e) => e.tag === tag);
  expect(cut).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, cut);
  writeFileSync(journalPath, JSON.stringify(journal));
  return { folder, remove: () => rmSync(folder, { recursive: true, force: true }) };
}

it('sets has_integrations and has_webhooks of the projects that had them when 0022 ran', async () => {
  const { database, cleanup } = await emptyDatabase();
  const before = migrationsBefore('0022_project_outbox_flags');
  try {
    await migrateHistoryOnly(database, before.folder);
    await database.db.execute(sql`
      INSERT INTO projects (id, name) VALUES
        ('00000000-0000-4000-8000-000000000001', 'connected'),
        ('00000000-0000-4000-8000-000000000002', 'webhooked'),
        ('00000000-0000-4000-8000-000000000003', 'neither')`);
    await database.db.execute(sql`
      INSERT INTO integrations (project_id, platform, bot_token_sealed, bot_id, bot_name)
      VALUES ('00000000-0000-4000-8000-000000000001', 'discord', 'sealed', 'bot-1', 'Bot')`);
    await database.db.execute(sql`
      INSERT INTO webhooks (project_id, url, secret) VALUES ('00000000-0000-4000-8000-000000000002', 'https://example.com/hook', 'secret')`);

    await database.migrate();
    const flags = rowsOf<{ name: string; has_integrations: boolean; has_webhooks: boolean; live_until: string | null }>(
      await database.db.execute(sql`SELECT name, has_integrations, has_webhooks, live_until FROM projects ORDER BY name`),
    );
    expect(flags).toStrictEqual([
      { name: 'connected', has_integrations: true, has_webhooks: false, live_until: null },
      { name: 'neither', has_integrations: false, has_webhooks: false, live_until: null },
      { name: 'webhooked', has_integrations: false, has_webhooks: true, live_until: null },
    ]);
  } finally {
    before.remove();
    await cleanup();
  }
});
