import { sql } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { createMembership } from '../support/api.js';
import { connectBot } from '../support/bots.js';
import { createPlan, createTarget, grant, snowflake } from '../support/catalogue.js';
import { buttonPress, command, frontDeskGuild, postInteraction } from '../support/discord-interactions.js';
import { useHarness, userId } from '../support/harness.js';
import { connectStripe } from '../support/payments.js';

/** `POST /interactions/discord/{project_id}`: signatures, PING, the commands and buttons (docs/front-desk.md). */

const h = useHarness();

describe('the signature', () => {
  it('PING is answered PONG when Discord signed it', async () => {
    const g = await frontDeskGuild(h);
    const res = await postInteraction(h, g.t, h.discord.signInteraction(g.bot.id, { type: 1 }));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toStrictEqual({ type: 1 });
  });

  it('a missing signature, a forged one, a changed body and an old timestamp are 401', async () => {
    const g = await frontDeskGuild(h);
    const ping = h.discord.signInteraction(g.bot.id, { type: 1 });
    const missing = await postInteraction(h, g.t, ping, { 'x-signature-ed25519': undefined });
    expect(missing.statusCode, missing.body).toBe(401);
    const noTimestamp = await postInteraction(h, g.t, ping, { 'x-signature-timestamp': undefined });
    expect(noTimestamp.statusCode, noTimestamp.body).toBe(401);
    // Signed by another application's key.
    const other = frontDeskGuild(h);
    const stranger = h.discord.signInteraction((await other).bot.id, { type: 1 });
    const forged = await postInteraction(h, g.t, stranger);
    expect(forged.statusCode, forged.body).toBe(401);
    expect(forged.json().error.message).toMatch(/signature does not verify/);
    const changed = await postInteraction(h, g.t, { ...ping, payload: ping.payload.replace('"type":1', '"type":1 ') });
    expect(changed.statusCode, changed.body).toBe(401);
    const old = h.discord.signInteraction(g.bot.id, { type: 1 }, Math.floor(Date.now() / 1000) - 6 * 60);
    const stale = await postInteraction(h, g.t, old);
    expect(stale.statusCode, stale.body).toBe(401);
    expect(stale.json().error.message).toMatch(/more than 5 minutes/);
  });

  it('an interaction sent twice is refused the second time, and nothing is answered again', async () => {
    const g = await frontDeskGuild(h);
    const signed = h.discord.signInteraction(g.bot.id, command('subscribe', g.guildId, userId()));
    expect((await postInteraction(h, g.t, signed)).statusCode).toBe(200);
    const replay = await postInteraction(h, g.t, signed);
    expect(replay.statusCode, replay.body).toBe(401);
    expect(replay.json().error.message).toMatch(/received before/);
  });

  it('a project without a Discord bot refuses every interaction', async () => {
    const t = await h.tenant();
    const g = await frontDeskGuild(h);
    const res = await postInteraction(h, t, h.discord.signInteraction(g.bot.id, { type: 1 }));
    expect(res.statusCode, res.body).toBe(401);
  });
});

describe('the commands are registered', () => {
  it('on connect: the application is read and the three commands overwrite the guild’s, /subscribe-panel for admins only', async () => {
    const g = await frontDeskGuild(h);
    const commands = h.discord.guildCommands(g.bot.id, g.guildId);
    expect(commands.map((c) => c.name)).toStrictEqual(['subscribe', 'memberships', 'subscribe-panel']);
    expect(commands.map((c) => c.default_member_permissions)).toStrictEqual([null, null, '8']);
    const row = rowsOf<{ application_id: string; verify_key: string; commands_error: unknown }>(
      await h.database.db.execute(sql`SELECT application_id, verify_key, commands_error FROM integrations WHERE project_id = ${g.t.projectId}`),
    )[0]!;
    expect(row).toStrictEqual({ application_id: g.bot.id, verify_key: h.discord.verifyKey(g.bot.id), commands_error: null });
  });

  it('again when a Discord target is created or deleted', async () => {
    const g = await frontDeskGuild(h);
    const other = snowflake();
    h.discord.addGuild({ id: other });
    const target = await createTarget(g.t, { kind: 'guild', target_name: 'Second', external_id: other });
    await vi.waitFor(() => expect(h.discord.guildCommands(g.bot.id, other)).toHaveLength(3));
    const puts = () => h.discord.calls.filter((c) => c.botId === g.bot.id && c.method === 'PUT' && c.route?.endsWith('/commands')).length;
    const before = puts();
    expect((await g.t.request({ method: 'DELETE', url: `${g.t.base}/targets/${target.target_id}` })).statusCode).toBe(204);
    await vi.waitFor(() => expect(puts()).toBeGreaterThan(before));
  });

  it('a guild refusing the registration is recorded on the connection, which still answers 200', async () => {
    const g = await frontDeskGuild(h);
    const away = snowflake();
    h.discord.addGuild({ id: away, ownerBots: [] });
    await createTarget(g.t, { kind: 'guild', target_name: 'Away', external_id: away });
    const error = async () =>
      rowsOf<{ commands_error: { code: string; message: string } | null }>(
        await h.database.db.execute(sql`SELECT commands_error FROM integrations WHERE project_id = ${g.t.projectId}`),
      )[0]!.commands_error;
    await vi.waitFor(async () => expect(await error()).toMatchObject({ code: '50001', message: expect.stringContaining(away) }));
    const status = await g.t.request({ method: 'GET', url: `${g.t.base}/integrations/discord` });
    expect(status.json().data).toMatchObject({ health: 'ok', commands_error: { code: '50001', message: `Guild ${away}: Missing Access` } });
    // The other guild still has its commands; connecting again keeps the error until the guild takes them.
    expect(h.discord.guildCommands(g.bot.id, g.guildId)).toHaveLength(3);
    await connectBot(g.t, g.bot);
    expect(await error()).toMatchObject({ code: '50001' });
    h.discord.addBotToGuild(away, g.bot.id);
    await connectBot(g.t, g.bot);
    expect(await error()).toBeNull();
  });
});

describe('what members see', () => {
  it('/subscribe lists the plans granting something in this guild as buttons, ephemeral', async () => {
    const g = await frontDeskGuild(h);
    // A plan of another guild and a Telegram plan are not offered here.
    const elsewhere = await createTarget(g.t, { kind: 'guild', target_name: 'Elsewhere', external_id: snowflake() });
    const otherPlan = await createPlan(g.t, { plan_name: 'Other' });
    await grant(g.t, otherPlan.plan_id, elsewhere.target_id);
    await createPlan(g.t, { plan_name: 'Nothing granted' });
    const res = await postInteraction(h, g.t, h.discord.signInteraction(g.bot.id, command('subscribe', g.guildId, userId())));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toStrictEqual({
      type: 4,
      data: {
        content: expect.stringContaining('Pick a plan'),
        flags: 64,
        components: [{ type: 1, components: [{ type: 2, style: 1, label: 'Gold · $10.00', custom_id: `tenure:plan:${g.planId}` }] }],
      },
    });
  });

  it('a plan button is answered deferred and ephemeral, then edited with the summary and the pressing member’s own pay link', async () => {
    const g = await frontDeskGuild(h);
    const member = userId();
    const signed = h.discord.signInteraction(g.bot.id, buttonPress(`tenure:plan:${g.planId}`, g.guildId, member));
    const res = await postInteraction(h, g.t, signed);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toStrictEqual({ type: 5, data: { content: '', flags: 64 } });
    await vi.waitFor(() => expect(h.discord.originalEdits.filter((e) => e.token === signed.interaction.token)).toHaveLength(1));
    const edit = h.discord.originalEdits.find((e) => e.token === signed.interaction.token)!;
    expect(edit.applicationId).toBe(g.bot.id);
    const payUrl = `${h.config.frontDesk.publicUrl}/pay/`;
    expect(edit.body).toStrictEqual({
      content: '**Gold**: $10.00, for 1 month, no renewal.\nYou get: VIP.\nThis link is yours alone: pay with it and your access arrives on its own within moments.',
      flags: 64,
      components: [{ type: 1, components: [{ type: 2, style: 5, label: 'Pay now', url: expect.stringMatching(new RegExp(`^${payUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[A-Za-z0-9_-]+$`)) }] }],
    });
    const url = (edit.body.components as { components: { url: string }[] }[])[0]!.components[0]!.url;
    const link = await h.services.payLinks.find(g.t.projectId, url.slice(payUrl.length));
    expect(link).toMatchObject({ plan_id: g.planId, user_id: member, open: true });
  });

  it('a Stripe slower than 3 s does not hold the answer: deferred at once and the link edited in; Stripe is asked only when the member opens the link (GET /pay/{id})', async () => {
    const g = await frontDeskGuild(h);
    await connectStripe(h, g.t);
    h.stripe.setLatency(3_500);
    try {
      const callsBefore = h.stripe.calls.length;
      const signed = h.discord.signInteraction(g.bot.id, buttonPress(`tenure:plan:${g.planId}`, g.guildId, userId()));
      const started = Date.now();
      const res = await postInteraction(h, g.t, signed);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(res.json()).toStrictEqual({ type: 5, data: { content: '', flags: 64 } });
      await vi.waitFor(() => expect(h.discord.originalEdits.filter((e) => e.token === signed.interaction.token)).toHaveLength(1), { timeout: 2_500 });
      expect(h.discord.originalEdits.find((e) => e.token === signed.interaction.token)!.body.content).toContain('Gold');
      expect(h.stripe.calls.length).toBe(callsBefore);
    } finally {
      h.stripe.setLatency(0);
    }
  });

  it('a member the project banned is told the link cannot be made, and gets none', async () => {
    const g = await frontDeskGuild(h);
    const member = userId();
    expect((await g.t.request({ method: 'PUT', url: `${g.t.base}/ban/${member}`, payload: {} })).statusCode).toBe(200);
    const signed = h.discord.signInteraction(g.bot.id, buttonPress(`tenure:plan:${g.planId}`, g.guildId, member));
    expect((await postInteraction(h, g.t, signed)).json()).toMatchObject({ type: 5 });
    await vi.waitFor(() => expect(h.discord.originalEdits.filter((e) => e.token === signed.interaction.token)).toHaveLength(1));
    const edit = h.discord.originalEdits.find((e) => e.token === signed.interaction.token)!;
    expect(edit.body).toStrictEqual({ content: `I could not make your pay link: User ${member} is banned from this project`, flags: 64 });
  });

  it('a button naming a plan not offered here says so', async () => {
    const g = await frontDeskGuild(h);
    const stray = await createPlan(g.t, { plan_name: 'Stray' });
    const res = await postInteraction(h, g.t, h.discord.signInteraction(g.bot.id, buttonPress(`tenure:plan:${stray.plan_id}`, g.guildId, userId())));
    expect(res.json()).toMatchObject({ type: 4, data: { flags: 64, content: expect.stringContaining('no longer offered') } });
  });

  it('/memberships shows the member’s own memberships with a link to their portal, ephemeral', async () => {
    const g = await frontDeskGuild(h);
    const member = userId();
    const membership = await createMembership(g.t, { userId: member, planId: g.planId });
    const mine = await postInteraction(h, g.t, h.discord.signInteraction(g.bot.id, command('memberships', g.guildId, member)));
    const seconds = Math.floor(Date.parse(membership.membership_end_date) / 1000);
    expect(mine.json()).toStrictEqual({
      type: 4,
      data: {
        flags: 64,
        content:
          `**Gold**: active until <t:${seconds}:D>, does not renew (use /subscribe to extend).\n` +
          'Your payments and billing are on your own page (the link works once, for 15 minutes).',
        components: [{ type: 1, components: [{ type: 2, style: 5, label: 'My membership page', url: expect.stringMatching(/\/portal\/[A-Za-z0-9_-]+$/) }] }],
      },
    });
    // The link opens the member's own portal.
    const portal = new URL(mine.json().data.components[0].components[0].url);
    const page = await h.app.inject({ method: 'GET', url: portal.pathname });
    expect(page.statusCode, page.body).toBe(200);
    expect(page.body).toContain('Gold');
    const stranger = await postInteraction(h, g.t, h.discord.signInteraction(g.bot.id, command('memberships', g.guildId, userId())));
    expect(stranger.json().data.content).toMatch(/no membership here yet/);
  });

  it('/subscribe-panel posts a lasting Subscribe button for an admin only; the button lists the plans', async () => {
    const g = await frontDeskGuild(h);
    const admin = await postInteraction(h, g.t, h.discord.signInteraction(g.bot.id, command('subscribe-panel', g.guildId, userId(), '8')));
    expect(admin.json()).toStrictEqual({
      type: 4,
      data: { content: expect.stringContaining('Subscribe'), components: [{ type: 1, components: [{ type: 2, style: 1, label: 'Subscribe', custom_id: 'tenure:subscribe' }] }] },
    });
    const member = await postInteraction(h, g.t, h.discord.signInteraction(g.bot.id, command('subscribe-panel', g.guildId, userId(), '0')));
    expect(member.json()).toMatchObject({ type: 4, data: { flags: 64, content: expect.stringContaining('Only the server admins') } });
    const pressed = await postInteraction(h, g.t, h.discord.signInteraction(g.bot.id, buttonPress('tenure:subscribe', g.guildId, userId())));
    expect(pressed.json().data.components[0].components[0].custom_id).toBe(`tenure:plan:${g.planId}`);
  });
});
