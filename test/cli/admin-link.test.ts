import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { digestOf } from '../../src/domain/dashboard/tokens.js';
import { createAdmin } from '../support/admins.js';
import { cliOn } from '../support/cli.js';
import { useHarness } from '../support/harness.js';

/**
 * `npx tenure admin link` (docs/dashboard.md, "Signing in"): the owner's link and an admin's, built
 * on TENURE_PUBLIC_URL, only their digest stored; an unknown project, a user who is no admin, a
 * malformed id: a message on stderr, nothing on stdout, exit 1, no link made.
 */
describe('tenure admin link', () => {
  const h = useHarness({ env: { TENURE_PUBLIC_URL: 'https://members.example.com/tenure' } });
  const tenure = (...args: string[]) => cliOn(h)(...args);
  const links = async (projectId: string) =>
    rowsOf<{ token_hash: string; user_id: string | null }>(await h.database.db.execute(sql`SELECT token_hash, user_id FROM dashboard_links WHERE project_id = ${projectId}`));

  it("prints the owner's one-time link on TENURE_PUBLIC_URL, valid 15 minutes; the database keeps its digest", async () => {
    const t = await h.tenant();
    const before = Date.now();
    const res = await tenure('admin', 'link', '--project', t.projectId);
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout) as { url: string; expires_at: string; user_id: string | null };
    expect(out.url).toMatch(/^https:\/\/members\.example\.com\/tenure\/dashboard\/sign-in\/[A-Za-z0-9_-]{43}$/);
    expect(out.user_id).toBeNull();
    const ttl = Date.parse(out.expires_at) - before;
    expect(ttl).toBeGreaterThan(14 * 60_000);
    expect(ttl).toBeLessThanOrEqual(15 * 60_000 + 5_000);
    expect(res.stderr).toMatch(/works once and signs in the owner/);
    const token = out.url.slice(out.url.lastIndexOf('/') + 1);
    expect(await links(t.projectId)).toStrictEqual([{ token_hash: digestOf(token), user_id: null }]);
  });

  it("prints an admin's link with --user", async () => {
    const t = await h.tenant();
    const admin = await createAdmin(t, ['admins:read']);
    const res = await tenure('admin', 'link', '--project', t.projectId, '--user', admin.user_id);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ user_id: admin.user_id });
    expect((await links(t.projectId)).map((l) => l.user_id)).toStrictEqual([admin.user_id]);
  });

  it.each([
    ['an unknown project', ['--project', '00000000-0000-4000-8000-000000000000'], /Project 00000000-0000-4000-8000-000000000000 not found/],
    ['a project id that is no uuid', ['--project', 'acme'], /Project acme not found/],
    ['a user who is not an admin', ['--user', '123456789012345678'], /User 123456789012345678 is not an admin of project/],
    ['a user id that is not digits', ['--user', 'ada'], /--user must be a user id \(digits\), got "ada"/],
  ])('refuses %s: a message, exit 1, no link', async (_what, args, message) => {
    const t = await h.tenant();
    const full = args[0] === '--project' ? args : ['--project', t.projectId, ...args];
    const res = await tenure('admin', 'link', ...full);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(message);
    expect(await links(t.projectId)).toStrictEqual([]);
  });

  it('without --project: a usage error naming it, non-zero exit', async () => {
    const res = await tenure('admin', 'link');
    expect(res.code).not.toBe(0);
    expect(res.stderr).toMatch(/--project/);
  });
});
