import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createAdmin } from '../support/admins.js';
import { DashboardBrowser } from '../support/dashboard.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { discord, markUnhealthy } from '../support/integrations.js';
import { merchantAccountRows, newWebhookSecret } from '../support/payments.js';

/**
 * The dashboard's integrations page (docs/dashboard-settings.md): each bot's status with the fix for
 * each problem in plain words, connecting a bot and a Stripe account through the services the API
 * uses, secrets never shown back (not even after a refusal) nor in the audit log, and the whole page
 * refused without settings.integrations:write.
 */
describe('dashboard integrations page', () => {
  const h = useHarness();
  const integrationOf = async (t: Tenant) => (await t.request({ method: 'GET', url: `${t.base}/integrations/discord` })).statusCode;

  it('connects a Discord bot from the form, shows an unhealthy target with its fix, the unreachable members, and a Stripe account with its webhook address', async () => {
    const t = await h.tenant();
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    const p = `/dashboard/${t.projectId}`;
    const first = await b.get(`${p}/integrations`);
    expect(first.body).toMatch(/Discord bot\s*<span class="tag warn">not connected/);
    const bot = discord.addBot(h, 'tenure-bot');
    const connected = await b.post(`${p}/integrations/discord/connect`, { bot_token: bot.token, client_secret: '' });
    expect(connected.statusCode, connected.body).toBe(303);
    expect(connected.headers.location).toBe(`${p}/integrations?notice=discord`);
    expect(await integrationOf(t)).toBe(200);

    const role = await discord.addTarget(h, t, 'VIP');
    await markUnhealthy(h, [role.target_id], { code: '50013', message: 'Missing Permissions' });
    await h.database.db.execute(sql`INSERT INTO unreachable_members (project_id, user_id, platform, reason) VALUES (${t.projectId}, '42', 'discord', 'dm_closed')`);
    const page = await b.get(`${p}/integrations`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('tenure-bot');
    expect(page.body).toContain('needs attention');
    expect(page.body).toContain('Missing Permissions (50013)');
    expect(page.body).toContain('Server Settings → Roles, drag the bot&#39;s role above this role');
    expect(page.body).toContain('closed their DMs to the bot');
    expect(page.body).not.toContain(bot.token);

    const { account, secretKey } = h.stripe.world.addAccount({ livemode: false });
    const stripe = await b.post(`${p}/integrations/stripe/accounts`, { environment: 'sandbox', secret_key: secretKey, webhook_secret: newWebhookSecret() });
    expect(stripe.statusCode, stripe.body).toBe(303);
    const [row] = await merchantAccountRows(h, t.projectId);
    const withStripe = await b.get(`${p}/integrations`);
    expect(withStripe.body).toContain(`/v2/stripe/events/${row!.id}`);
    expect(withStripe.body).toContain(account.id);
    expect(withStripe.body).not.toContain(secretKey);

    const audit = await b.get(`${p}/audit`);
    expect([...audit.body.matchAll(/<code>([a-z.-]+)<\/code>/g)].map((m) => m[1]).filter((a) => !a!.startsWith('session.'))).toStrictEqual(['merchant-account.connect', 'integration.connect']);
    expect(audit.body).not.toContain(bot.token);
    expect(audit.body).not.toContain(secretKey);
  });

  it('a refused token or key shows the reason, never the secret typed, and stores nothing', async () => {
    const t = await h.tenant();
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    const p = `/dashboard/${t.projectId}`;
    await b.get(`${p}/integrations`);
    const bot = discord.addBot(h);
    const stranger = discord.strangerToken(bot);
    const refused = await b.post(`${p}/integrations/discord/connect`, { bot_token: stranger, client_secret: 'short' });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('client_secret must be the Discord application');
    expect(refused.body).not.toContain(stranger);
    const unknown = await b.post(`${p}/integrations/discord/connect`, { bot_token: stranger, client_secret: '' });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.body).toMatch(/class="error" role="alert">[^<]+/);
    expect(unknown.body).not.toContain(stranger);
    const empty = await b.post(`${p}/integrations/telegram/connect`, { bot_token: '' });
    expect(empty.statusCode).toBe(422);
    expect(empty.body).toContain('Paste the bot token.');
    expect(await integrationOf(t)).toBe(404);
    const badKey = await b.post(`${p}/integrations/stripe/accounts`, { environment: 'sandbox', secret_key: 'sk_test_nope' });
    expect(badKey.statusCode).toBe(422);
    expect(badKey.body).not.toContain('sk_test_nope');
    const badEnv = await b.post(`${p}/integrations/stripe/accounts`, { environment: 'moon', secret_key: 'sk_test_nope' });
    expect(badEnv.body).toContain('environment must be one of: sandbox, production');
    expect(await merchantAccountRows(h, t.projectId)).toStrictEqual([]);
  });

  it('without settings.integrations:write: a 403 page, and direct POSTs with a valid token are 403 and connect nothing', async () => {
    const t = await h.tenant();
    const admin = await createAdmin(t, ['plans:read', 'merchant-accounts:read']);
    const b = new DashboardBrowser(h);
    await b.signIn(t, admin.user_id);
    const p = `/dashboard/${t.projectId}`;
    const page = await b.get(`${p}/integrations`);
    expect(page.statusCode).toBe(403);
    expect(page.body).toContain('settings.integrations:write');
    expect(page.body).not.toContain('Connect bot');
    await b.get(`${p}/plans`);
    const bot = discord.addBot(h);
    expect((await b.post(`${p}/integrations/discord/connect`, { bot_token: bot.token })).statusCode).toBe(403);
    const { secretKey } = h.stripe.world.addAccount({ livemode: false });
    expect((await b.post(`${p}/integrations/stripe/accounts`, { environment: 'sandbox', secret_key: secretKey })).statusCode).toBe(403);
    expect(await integrationOf(t)).toBe(404);
    expect(await merchantAccountRows(h, t.projectId)).toStrictEqual([]);
    // With the permission but without merchant-accounts:read the Stripe accounts are not listed.
    const writer = new DashboardBrowser(h);
    await writer.signIn(t, (await createAdmin(t, ['settings.integrations:write'])).user_id);
    const limited = await writer.get(`${p}/integrations`);
    expect(limited.statusCode).toBe(200);
    expect(limited.body).toContain('Seeing the Stripe accounts needs the permission merchant-accounts:read');
  });
});
