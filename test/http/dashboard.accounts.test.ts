import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { createAdmin } from '../support/admins.js';
import { addTelegramBot, connectTelegramBot } from '../support/bots.js';
import { DashboardBrowser, dashboardDiscord, linkPath } from '../support/dashboard.js';
import { useHarness, type Harness } from '../support/harness.js';
import { seedUser } from '../support/keys.js';
import { widgetAnswer } from '../support/web-telegram.js';

/**
 * An admin signs in to the dashboard with Discord or Telegram (docs/dashboard.md, "Signing in"):
 * only an admin of the project gets a session; a state or widget answer used twice, one from
 * another browser, or a forged one starts nothing.
 */
const sessionsOf = async (h: Harness, projectId: string) =>
  rowsOf<{ user_id: string; method: string }>(await h.database.db.execute(sql`SELECT user_id, method FROM dashboard_sessions WHERE project_id = ${projectId}`));

describe('dashboard sign-in with Discord', () => {
  const h = useHarness();

  /** Presses Log in with Discord and consents on the fake Discord: the callback's location. */
  const throughDiscord = async (b: DashboardBrowser, projectId: string) => {
    await b.get(`/dashboard/${projectId}/sign-in`);
    const start = await b.post(`/dashboard/${projectId}/sign-in/discord`);
    expect(start.statusCode, start.body).toBe(303);
    const authorize = new URL(start.headers.location as string);
    expect(authorize.searchParams.get('scope')).toBe('identify');
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    const answer = await fetch(authorize, { redirect: 'manual' });
    expect(answer.status, await answer.clone().text()).toBe(302);
    const back = new URL(answer.headers.get('location')!);
    return `${back.pathname}${back.search}`;
  };

  it('an admin signs in (scope identify, PKCE); the state is single use; a non-admin gets a page saying so', async () => {
    const t = await h.tenant();
    await dashboardDiscord(h, t);
    const admin = await createAdmin(t, ['plans:read'], { first_name: 'Lin' });
    const b = new DashboardBrowser(h);
    const page = await b.get(`/dashboard/${t.projectId}/sign-in`);
    expect(page.body).toContain('Log in with Discord');
    h.discord.oauth.nextLogin = { userId: admin.user_id };
    const callback = await throughDiscord(b, t.projectId);
    const done = await b.get(callback);
    expect(done.statusCode, done.body).toBe(303);
    expect(done.headers.location).toBe(`/dashboard/${t.projectId}`);
    expect((await b.get(`/dashboard/${t.projectId}`)).body).toContain(`Signed in as <strong>Lin (${admin.user_id})</strong>`);
    expect(await sessionsOf(h, t.projectId)).toStrictEqual([{ user_id: admin.user_id, method: 'discord' }]);
    const audit = await h.services.dashboardAudit.list(t.projectId, { limit: 5, offset: 0 });
    expect(audit.items).toMatchObject([{ action: 'session.sign-in', actorUserId: admin.user_id, details: { method: 'discord' } }]);

    // The same answer again (its state cookie is gone, so: not this browser's), and from another browser.
    expect((await b.get(callback)).statusCode).toBe(400);
    const stranger = await new DashboardBrowser(h).get(callback);
    expect(stranger.statusCode).toBe(400);
    expect(stranger.body).toContain('This sign-in did not start here');

    const plain = await seedUser(t);
    h.discord.oauth.nextLogin = { userId: plain };
    const other = new DashboardBrowser(h);
    const refused = await other.get(await throughDiscord(other, t.projectId));
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain(`The account ${plain} is not an admin of this project`);
    expect(await sessionsOf(h, t.projectId)).toHaveLength(1);
  });

  it('a project without a Discord application secret offers no Discord button, and its start is refused', async () => {
    const t = await h.tenant();
    const b = new DashboardBrowser(h);
    const page = await b.get(`/dashboard/${t.projectId}/sign-in`);
    expect(page.body).not.toContain('Log in with Discord');
    expect(page.body).toContain('npx tenure admin link --project');
    // A valid CSRF token (from a link's page): the start itself is what is refused.
    await b.get(await linkPath(h, t));
    const start = await b.post(`/dashboard/${t.projectId}/sign-in/discord`);
    expect(start.statusCode).toBe(409);
    expect(start.body).toContain('This sign-in is not set up');
  });
});

describe('dashboard sign-in with Telegram', () => {
  const h = useHarness();

  it('an admin signs in with the widget; the answer works once, only in the browser that showed it; a forged one is refused', async () => {
    const t = await h.tenant();
    const bot = addTelegramBot(h.telegram, `dash_${t.projectId.slice(0, 6)}_bot`);
    await connectTelegramBot(t, bot);
    const telegramId = String(5_000_000_000 + Math.floor(Math.random() * 1_000_000));
    await seedUser(t, { first_name: 'Tess' }, telegramId);
    await t.request({ method: 'POST', url: `${t.base}/admins`, payload: { user_id: telegramId, permissions: ['admins:read'] } });
    const b = new DashboardBrowser(h);
    const page = await b.get(`/dashboard/${t.projectId}/sign-in`);
    expect(page.body).toContain(`data-telegram-login="${bot.username}"`);
    expect(page.headers['content-security-policy']).toContain('script-src https://telegram.org');
    const callback = `/dashboard/${t.projectId}/telegram/callback`;
    expect(page.body).toContain(`data-auth-url="${h.config.frontDesk.publicUrl.replace(/\/+$/, '')}${callback}"`);

    const answer = widgetAnswer(bot.token, { id: telegramId, first_name: 'Tess' });
    expect((await new DashboardBrowser(h).get(`${callback}?${answer}`)).statusCode).toBe(400);
    const forged = widgetAnswer('1:not-the-token', { id: telegramId });
    const bad = await b.get(`${callback}?${forged}`);
    expect(bad.statusCode).toBe(400);
    expect(await sessionsOf(h, t.projectId)).toStrictEqual([]);

    const ok = await b.get(`${callback}?${answer}`);
    expect(ok.statusCode, ok.body).toBe(303);
    expect((await b.get(`/dashboard/${t.projectId}`)).body).toContain(`Tess (${telegramId})`);
    const again = await b.get(`${callback}?${answer}`);
    expect(again.statusCode).toBe(410);
    expect(again.body).toContain('This login was already used');
    expect(await sessionsOf(h, t.projectId)).toStrictEqual([{ user_id: telegramId, method: 'telegram' }]);
  });
});
