import { describe, expect, it } from 'vitest';
import { headingOf } from '../support/front-desk.js';
import { useHarness } from '../support/harness.js';
import { textOf } from '../support/portal.js';
import { checkoutAfterLogin, guildJoinPasses, webShop, type WebShop } from '../support/web.js';

/**
 * The done page after a purchase with Login with Discord (docs/web.md, "What the done page tells
 * the member"): while the guild join is queued it says so with a reload button (no script), once
 * made that the member is in, and when Discord refuses (30001, 40007, 50013, another code) what
 * happened and what to do, the payment standing.
 */

describe('the done page tells a member who logged in with Discord how joining the server went', () => {
  const h = useHarness();
  const pass = guildJoinPasses(h);

  /** Logs `buyer` in and pays on Stripe; Stripe sends them back to the done page, which applies the payment. */
  async function paid(shop: WebShop, buyer: string) {
    const { payPath, sessionId } = await checkoutAfterLogin(h, shop, buyer);
    h.stripe.world.pay(sessionId);
    return `${payPath}/done`;
  }
  const done = async (path: string) => {
    const res = await h.app.inject({ method: 'GET', url: path, headers: { accept: 'text/html' } });
    expect(res.statusCode, res.body).toBe(200);
    return { heading: headingOf(res.body), text: textOf(res.body), body: res.body };
  };

  it('queued: "adding you" with a reload button to the same page; then joined: in the server', async () => {
    const shop = await webShop(h);
    const path = await paid(shop, '823456789012345678');
    const joining = await done(path);
    expect(joining.heading).toBe('You are in!');
    expect(joining.text).toContain('We are adding you to the Discord server now. Reload this page in a few seconds');
    expect(joining.body).toContain(`<a class="button" href="${path}">Reload</a>`);
    expect(joining.body).not.toContain('<script');
    await pass();
    const joined = await done(path);
    expect(joined.heading).toBe('You are in!');
    expect(joined.text).toContain('You are in the Discord server now');
    expect(joined.body).not.toContain('>Reload<');
  });

  it.each([
    ['30001, in too many servers', (shop: WebShop, buyer: string) => h.discord.oauth.tooManyGuilds(buyer), 'already in as many servers as it allows (100)', 'Leave a server you no longer use'],
    ['40007, banned from the server', (shop: WebShop, buyer: string) => h.discord.oauth.bannedFrom(shop.guildId, buyer), 'banned from the server', 'contact the community team'],
    ['50013, the bot lacks Create Invite', (shop: WebShop) => h.discord.oauth.allowInvites(shop.guildId, shop.bot.id, false), 'needs the Create Invite permission', 'Ask the community team for an invite'],
  ])('Discord refuses with %s: what happened and what to do, the payment standing', async (_name, refuse, what, todo) => {
    const shop = await webShop(h);
    const buyer = String(900_000_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e12)));
    refuse(shop, buyer);
    const path = await paid(shop, buyer);
    // Stripe's return applies the payment, which queues the join.
    expect((await done(path)).text).toContain('We are adding you');
    await pass();
    const page = await done(path);
    expect(page.heading).toBe('Paid, but we could not add you to the server');
    expect(page.text).toContain(what);
    expect(page.text).toContain(todo);
    expect(page.text).toContain('Your payment is safe and your membership runs');
    expect(page.body).not.toContain('>Reload<');
  });
});
