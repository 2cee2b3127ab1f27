import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/database/db.js';
import { expectSuccess, ISO_MS } from '../support/api.js';
import { headingOf, openPage, pathOf, payLinkStarted, payLinksPath } from '../support/front-desk.js';
import { useHarness } from '../support/harness.js';
import { deliverAll, membershipOf } from '../support/payments.js';

describe('POST /v2/projects/{project_id}/pay-links and the pages it opens: happy', () => {
  const h = useHarness();

  it('makes a link of 128+ random bits for one member and plan, valid 24 hours, at TENURE_PUBLIC_URL; only its digest is stored', async () => {
    const { t, plan, user, link } = await payLinkStarted(h);
    expect(link.pay_link_id).toMatch(/^[A-Za-z0-9_-]{22,64}$/);
    expect(link.url).toBe(`${h.config.frontDesk.publicUrl}/pay/${link.pay_link_id}`);
    expect(link.expires_at).toMatch(ISO_MS);
    expect(Math.abs(Date.parse(link.expires_at) - Date.now() - 86_400_000)).toBeLessThan(60_000);
    const res = await t.request({ method: 'POST', url: payLinksPath(t), payload: { plan_id: plan.plan_id, user_id: user, coupon: 'SPRING' } });
    expectSuccess(res, { method: 'POST', path: payLinksPath(t), message: 'Pay link created successfully', data: { pay_link_id: expect.any(String), url: expect.any(String), expires_at: expect.stringMatching(ISO_MS) } });
    expect(res.json().data.pay_link_id).not.toBe(link.pay_link_id);
    const rows = rowsOf<Record<string, unknown>>(await h.database.db.execute(sql`SELECT * FROM pay_links WHERE project_id = ${t.projectId}`));
    expect(rows).toHaveLength(2);
    expect(JSON.stringify(rows)).not.toContain(link.pay_link_id);
  });

  it('opens Stripe checkout for that member (303), reuses the session when opened again, and the done page says they are in once paid', async () => {
    const { t, stripe, user, plan, link } = await payLinkStarted(h);
    const first = await openPage(h, pathOf(link.url));
    expect(first.statusCode, first.body).toBe(303);
    const sessionId = /\/c\/pay\/(cs_test_[A-Za-z0-9]+)$/.exec(first.headers.location as string)?.[1];
    expect(sessionId, String(first.headers.location)).toBeDefined();
    const session = h.stripe.world.session(sessionId!);
    expect(session.metadata).toStrictEqual({ project_id: t.projectId, plan_id: plan.plan_id, user_id: user });
    expect(session.success_url).toBe(`${link.url}/done`);
    const posts = () => h.stripe.calls.filter((c) => c.path === '/v1/checkout/sessions' && c.key === stripe.secretKey).length;
    const before = posts();
    const again = await openPage(h, pathOf(link.url));
    expect(again.statusCode).toBe(303);
    expect(again.headers.location).toBe(first.headers.location);
    expect(posts()).toBe(before);

    await deliverAll(h, stripe, h.stripe.world.pay(sessionId!));
    const done = await openPage(h, `${pathOf(link.url)}/done`);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.headers['content-type']).toMatch(/^text\/html/);
    expect(headingOf(done.body)).toBe('You are in!');
    expect(done.body).toContain('Gold membership is active until');
    expect((await membershipOf(t, user))?.status).toBe('active');
    // Used: it pays nothing twice.
    const used = await openPage(h, pathOf(link.url));
    expect(used.statusCode).toBe(410);
    expect(headingOf(used.body)).toBe('This link has been used');
  });

  it('applies the session itself when Stripe\'s event is lost, once: the late event then changes nothing', async () => {
    for (const recurring of [false, true]) {
      const { t, stripe, user, link } = await payLinkStarted(h, { recurring });
      const opened = await openPage(h, pathOf(link.url));
      const sessionId = /(cs_test_[A-Za-z0-9]+)$/.exec(opened.headers.location as string)![1]!;
      const events = h.stripe.world.pay(sessionId);
      const done = await openPage(h, `${pathOf(link.url)}/done`);
      expect(headingOf(done.body), done.body).toBe('You are in!');
      const granted = await membershipOf(t, user);
      expect(granted?.status).toBe('active');
      const again = await openPage(h, `${pathOf(link.url)}/done`);
      expect(headingOf(again.body)).toBe('You are in!');
      await deliverAll(h, stripe, events);
      expect((await membershipOf(t, user))?.membership_end_date, `recurring ${recurring}`).toBe(granted!.membership_end_date);
      const payments = rowsOf(await h.database.db.execute(sql`SELECT id FROM payments WHERE project_id = ${t.projectId}`));
      expect(payments).toHaveLength(1);
      const created = rowsOf(await h.database.db.execute(sql`SELECT id FROM events WHERE project_id = ${t.projectId} AND type = 'membership.created'`));
      expect(created).toHaveLength(1);
      const sources = rowsOf<{ source: string }>(await h.database.db.execute(sql`SELECT source FROM payment_events WHERE event_id = ${`tenure_return_${sessionId}`}`));
      expect(sources).toStrictEqual([{ source: 'return' }]);
    }
  });

  it('says what comes next before payment, and takes the member back to the same checkout', async () => {
    const { link } = await payLinkStarted(h);
    const before = await openPage(h, `${pathOf(link.url)}/done`);
    expect(before.statusCode).toBe(200);
    expect(headingOf(before.body)).toBe('You have not paid yet');
    expect(before.body).toContain(`href="/pay/${link.pay_link_id}"`);
    await openPage(h, pathOf(link.url));
    const cancelled = await openPage(h, `${pathOf(link.url)}/done`);
    expect(headingOf(cancelled.body)).toBe('You have not paid yet');
  });

  it('serves pages with a strict CSP, no framing, no referrer, and its one stylesheet', async () => {
    const { link } = await payLinkStarted(h);
    const res = await openPage(h, `${pathOf(link.url)}/done`);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('script-src');
    expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toContain('<html lang="en">');
    expect(res.body).toContain('name="viewport"');
    const css = await openPage(h, '/assets/pages.css');
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toMatch(/^text\/css/);
  });
});
