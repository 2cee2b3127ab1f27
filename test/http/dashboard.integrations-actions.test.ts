import { describe, expect, it } from 'vitest';
import { createAdmin } from '../support/admins.js';
import { DashboardBrowser } from '../support/dashboard.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { discord, telegram, type BotPlatform } from '../support/integrations.js';
import { connectStripe, merchantAccountRows } from '../support/payments.js';

/**
 * Disconnecting a bot and deleting a Stripe account from the dashboard's integrations page
 * (docs/dashboard-settings.md): a confirmation page first, then the service the v2 API's DELETE
 * uses, audited, 303 back with a notice; refused without the permission (403, nothing changed) or
 * without the form's CSRF token; an unknown or already gone subject is a clear 404 page.
 */
describe('dashboard integrations: disconnect a bot, delete a Stripe account', () => {
  const h = useHarness();
  const statusOf = async (t: Tenant, bot: BotPlatform) => (await t.request({ method: 'GET', url: bot.path(t) })).statusCode;
  const actionsOf = async (b: DashboardBrowser, p: string) =>
    [...(await b.get(`${p}/audit`)).body.matchAll(/<code>([a-z.-]+)<\/code>/g)].map((m) => m[1]).filter((a) => !a!.startsWith('session.'));

  /** A project with both bots and a sandbox Stripe account, connected through the API. */
  const connected = async () => {
    const t = await h.tenant();
    const tokens = [];
    for (const bot of [discord, telegram]) {
      const made = bot.addBot(h, `${bot.name}-bot`);
      tokens.push(made.token);
      await bot.connect(t, made);
    }
    const stripe = await connectStripe(h, t);
    return { t, tokens, stripe, p: `/dashboard/${t.projectId}` };
  };

  it('the owner disconnects each bot and deletes the Stripe account after a confirmation page; each is audited', async () => {
    const { t, tokens, stripe, p } = await connected();
    const id = stripe.view.merchant_account_id;
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    const page = await b.get(`${p}/integrations`);
    expect(page.body).toContain(`href="${p}/integrations/discord/disconnect"`);
    expect(page.body).toContain(`href="${p}/integrations/telegram/disconnect"`);
    expect(page.body).toContain(`href="${p}/integrations/stripe/accounts/${id}/delete"`);

    for (const bot of [discord, telegram]) {
      const confirm = await b.get(`${p}/integrations/${bot.name}/disconnect`);
      expect(confirm.statusCode, confirm.body).toBe(200);
      expect(confirm.body).toContain(`Disconnect the ${bot.label} bot ${bot.name}-bot?`);
      expect(confirm.body).toContain(`action="${p}/integrations/${bot.name}/disconnect"`);
      expect(await statusOf(t, bot)).toBe(200);
      const done = await b.post(`${p}/integrations/${bot.name}/disconnect`);
      expect(done.statusCode, done.body).toBe(303);
      expect(done.headers.location).toBe(`${p}/integrations?notice=${bot.name}-disconnected`);
      expect(await statusOf(t, bot)).toBe(404);
      expect((await b.get(done.headers.location as string)).body).toContain(`${bot.label} bot disconnected: its token is deleted`);
    }

    const confirm = await b.get(`${p}/integrations/stripe/accounts/${id}/delete`);
    expect(confirm.statusCode, confirm.body).toBe(200);
    expect(confirm.body).toContain('Delete the sandbox Stripe account');
    expect(confirm.body).toContain('Payments already recorded stay');
    expect(await merchantAccountRows(h, t.projectId)).toHaveLength(1);
    const deleted = await b.post(`${p}/integrations/stripe/accounts/${id}/delete`);
    expect(deleted.statusCode, deleted.body).toBe(303);
    expect(deleted.headers.location).toBe(`${p}/integrations?notice=stripe-deleted`);
    expect(await merchantAccountRows(h, t.projectId)).toStrictEqual([]);
    const after = await b.get(deleted.headers.location as string);
    expect(after.body).toContain('Stripe account deleted');
    expect(after.body).toContain('No Stripe account yet');

    expect(await actionsOf(b, p)).toStrictEqual(['merchant-account.delete', 'integration.disconnect', 'integration.disconnect']);
    const audit = (await b.get(`${p}/audit`)).body;
    for (const secret of [...tokens, stripe.secretKey, stripe.webhookSecret]) expect(audit).not.toContain(secret);
  });

  it('the Telegram confirmation names the bot from its stored connection: Telegram is not asked, as the integrations page asks it', async () => {
    const t = await h.tenant();
    await telegram.connect(t, telegram.addBot(h, 'telegram-bot'));
    await telegram.addTarget(h, t, 'Members chat');
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    const p = `/dashboard/${t.projectId}`;
    const before = telegram.calls(h);
    await b.get(`${p}/integrations`);
    // The page shows the bot's rights in the target chat, asked now.
    expect(telegram.calls(h)).toBeGreaterThan(before);
    const asked = telegram.calls(h);
    const confirm = await b.get(`${p}/integrations/telegram/disconnect`);
    expect(confirm.statusCode, confirm.body).toBe(200);
    expect(confirm.body).toContain('Disconnect the Telegram bot telegram-bot?');
    const done = await b.post(`${p}/integrations/telegram/disconnect`);
    expect(done.statusCode, done.body).toBe(303);
    expect(telegram.calls(h)).toBe(asked);
    expect(await statusOf(t, telegram)).toBe(404);
  });

  it('without settings.integrations:write, or merchant-accounts:read for Stripe: no link, a 403 page, and a direct POST with a valid token changes nothing', async () => {
    const { t, p, stripe } = await connected();
    const id = stripe.view.merchant_account_id;
    const reader = new DashboardBrowser(h);
    await reader.signIn(t, (await createAdmin(t, ['plans:read', 'merchant-accounts:read'])).user_id);
    await reader.get(`${p}/plans`);
    for (const path of ['/integrations/discord/disconnect', '/integrations/telegram/disconnect', `/integrations/stripe/accounts/${id}/delete`]) {
      const confirm = await reader.get(`${p}${path}`);
      expect(confirm.statusCode, path).toBe(403);
      expect(confirm.body).toContain('settings.integrations:write');
      expect(confirm.body).not.toContain('Yes, ');
      await reader.get(`${p}/plans`);
      expect(reader.csrf).not.toBe('');
      expect((await reader.post(`${p}${path}`)).statusCode, path).toBe(403);
    }
    // Allowed to change integrations but not to see the Stripe accounts: no Delete link, 403 on the action.
    const writer = new DashboardBrowser(h);
    await writer.signIn(t, (await createAdmin(t, ['settings.integrations:write'])).user_id);
    const page = await writer.get(`${p}/integrations`);
    expect(page.body).not.toContain('/delete"');
    const refused = await writer.get(`${p}/integrations/stripe/accounts/${id}/delete`);
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('merchant-accounts:read');
    await writer.get(`${p}/integrations`);
    expect((await writer.post(`${p}/integrations/stripe/accounts/${id}/delete`)).statusCode).toBe(403);

    expect(await statusOf(t, discord)).toBe(200);
    expect(await statusOf(t, telegram)).toBe(200);
    expect(await merchantAccountRows(h, t.projectId)).toHaveLength(1);
    const owner = new DashboardBrowser(h);
    await owner.signIn(t);
    expect(await actionsOf(owner, p)).toStrictEqual([]);
  });

  it('an unknown platform or account, a bot not connected, or one already gone: a clear 404 page and nothing changed', async () => {
    const t = await h.tenant();
    await discord.connect(t, discord.addBot(h));
    const { view } = await connectStripe(h, t);
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    const p = `/dashboard/${t.projectId}`;
    await b.get(`${p}/integrations`);
    for (const path of ['/integrations/slack/disconnect', '/integrations/telegram/disconnect']) {
      for (const res of [await b.get(`${p}${path}`), await b.post(`${p}${path}`)]) {
        expect(res.statusCode, path).toBe(404);
        expect(res.body).toContain('No bot to disconnect');
        expect(res.body).toContain('Nothing was changed.');
      }
    }
    for (const id of ['not-an-id', '00000000-0000-4000-8000-000000000000']) {
      const res = await b.post(`${p}/integrations/stripe/accounts/${id}/delete`);
      expect(res.statusCode, id).toBe(404);
      expect(res.body).toContain('Stripe account not found');
    }
    expect(await statusOf(t, discord)).toBe(200);
    expect(await merchantAccountRows(h, t.projectId)).toHaveLength(1);

    // Disconnected (through the API) while the confirmation page was open.
    await b.get(`${p}/integrations/discord/disconnect`);
    expect((await t.request({ method: 'DELETE', url: discord.path(t) })).statusCode).toBe(200);
    const gone = await b.post(`${p}/integrations/discord/disconnect`);
    expect(gone.statusCode).toBe(404);
    expect(gone.body).toContain('No Discord bot is connected to this project (any more)');
    await b.get(`${p}/integrations/stripe/accounts/${view.merchant_account_id}/delete`);
    expect((await b.post(`${p}/integrations/stripe/accounts/${view.merchant_account_id}/delete`)).statusCode).toBe(303);
    const twice = await b.post(`${p}/integrations/stripe/accounts/${view.merchant_account_id}/delete`);
    expect(twice.statusCode).toBe(404);
    expect(twice.body).toContain('Stripe account not found');
  });

  it('a POST without the form’s CSRF token is refused and changes nothing', async () => {
    const { t, p, stripe } = await connected();
    const b = new DashboardBrowser(h);
    await b.signIn(t);
    await b.get(`${p}/integrations`);
    for (const path of ['/integrations/discord/disconnect', '/integrations/telegram/disconnect', `/integrations/stripe/accounts/${stripe.view.merchant_account_id}/delete`]) {
      for (const csrf of ['', 'forged']) {
        const res = await b.post(`${p}${path}`, { _csrf: csrf });
        expect(res.statusCode, `${path} ${csrf}`).toBe(403);
        expect(res.body).toContain('nothing was changed');
      }
    }
    expect(await statusOf(t, discord)).toBe(200);
    expect(await statusOf(t, telegram)).toBe(200);
    expect(await merchantAccountRows(h, t.projectId)).toHaveLength(1);
  });
});
