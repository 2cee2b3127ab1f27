import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { expectError, expectRefusal, forEachCase, projectState } from '../support/api.js';
import { createPlan } from '../support/catalogue.js';
import { headingOf, openPage, pathOf, payLink, payLinkStarted, payLinksPath } from '../support/front-desk.js';
import { userId, useHarness } from '../support/harness.js';

describe('POST /v2/projects/{project_id}/pay-links and its pages: errors', () => {
  const h = useHarness();

  it('refuses bad input with a 422 naming it, asking Stripe nothing and changing nothing', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const hourly = await createPlan(t, { plan_duration: '12 hours', plan_data: { plan_recurring: true } });
    const free = await createPlan(t, { plan_price: '0' });
    const valid = { plan_id: plan.plan_id, user_id: userId() };
    const before = await projectState(h, t.projectId);
    const calls = h.stripe.calls.length;
    await forEachCase(
      [
        ['a plan id that is not a UUID', [{ ...valid, plan_id: 'gold' }, 'plan_id must be a UUID']],
        ['a user id that is not digits', [{ ...valid, user_id: 'bob' }, 'user_id must be a string of digits']],
        ['no user id', [{ plan_id: plan.plan_id }, /user_id/]],
        ['an empty coupon', [{ ...valid, coupon: '' }, 'coupon must be a string of 1 to 200 characters']],
        ['a free plan', [{ ...valid, plan_id: free.plan_id }, /The plan is free/]],
        ['a recurring plan by the hour', [{ ...valid, plan_id: hourly.plan_id }, /Stripe bills subscriptions by day, week, month or year only/]],
      ] as const,
      async ([payload, message]) => expectRefusal(await t.request({ method: 'POST', url: payLinksPath(t), payload }), message),
    );
    expect(h.stripe.calls.length).toBe(calls);
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  });

  it('404 for a plan of no project of the key, 409 for a banned member; nothing stored', async () => {
    const t = await h.tenant();
    const other = await h.tenant();
    const foreign = await createPlan(other);
    const path = payLinksPath(t);
    const before = await projectState(h, t.projectId);
    for (const planId of ['00000000-0000-4000-8000-000000000000', foreign.plan_id]) {
      expectError(await t.request({ method: 'POST', url: path, payload: { plan_id: planId, user_id: userId() } }), { status: 404, code: 'NOT_FOUND', method: 'POST', path, message: 'Plan not found' });
    }
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
    const plan = await createPlan(t);
    const banned = userId();
    expect((await t.request({ method: 'PUT', url: `${t.base}/ban/${banned}`, payload: {} })).statusCode).toBe(200);
    expectError(await t.request({ method: 'POST', url: path, payload: { plan_id: plan.plan_id, user_id: banned } }), { status: 409, code: 'CONFLICT', method: 'POST', path, message: `User ${banned} is banned from this project` });
    expect(rowsCount(await h.database.db.execute(sql`SELECT 1 FROM pay_links WHERE project_id = ${t.projectId}`))).toBe(0);
  });

  it('an unknown or malformed link is a 404 page, never a 500, and sends nobody anywhere', async () => {
    for (const id of ['A'.repeat(32), 'short', '..%2F..%2Fetc', 'x'.repeat(100), '%3Cscript%3E']) {
      for (const suffix of ['', '/done']) {
        const res = await openPage(h, `/pay/${id}${suffix}`);
        expect(res.statusCode, `${id}${suffix}: ${res.body}`).toBe(404);
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        expect(res.headers.location).toBeUndefined();
        expect(headingOf(res.body)).toBe('Link not found');
        expect(res.body).not.toContain('<script>');
      }
    }
    // Past the router's limit on a path parameter (100 characters): the same page, never the API's JSON.
    for (const path of [`/pay/${'x'.repeat(101)}`, `/pay/${'x'.repeat(300)}`, `/pay/${'x'.repeat(300)}/done`, '/pay/a/b/c']) {
      const res = await openPage(h, path);
      expect(res.statusCode, `${path.length}: ${res.body}`).toBe(404);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['content-security-policy']).toContain("default-src 'none'");
      expect(headingOf(res.body)).toBe('Link not found');
    }
  });

  it('an API path parameter past the router\'s limit is still refused with the JSON envelope, not a page', async () => {
    const t = await h.tenant();
    const res = await t.request({ method: 'GET', url: `${t.base}/memberships/${'x'.repeat(300)}` });
    expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
    expect(res.statusCode, res.body).toBeLessThan(500);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json(), res.body).toMatchObject({ ok: false });
  });

  it('an expired link is a 410 page that asks for a new one; nothing is made on Stripe', async () => {
    const { t, link } = await payLinkStarted(h);
    await h.database.db.execute(sql`UPDATE pay_links SET expires_at = now() - interval '1 minute' WHERE project_id = ${t.projectId}`);
    const calls = h.stripe.calls.length;
    const res = await openPage(h, pathOf(link.url));
    expect(res.statusCode, res.body).toBe(410);
    expect(headingOf(res.body)).toBe('This link has expired');
    expect(res.body).toContain('Ask the bot for a new link');
    const done = await openPage(h, `${pathOf(link.url)}/done`);
    expect(done.statusCode).toBe(410);
    expect(h.stripe.calls.length).toBe(calls);
  });

  it('a link of a project with no Stripe account is a 409 page; a checkout Stripe let lapse is a 410 page', async () => {
    const t = await h.tenant();
    const plan = await createPlan(t);
    const link = await payLink(t, plan.plan_id, userId());
    const res = await openPage(h, pathOf(link.url));
    expect(res.statusCode, res.body).toBe(409);
    expect(headingOf(res.body)).toBe('This plan cannot be bought right now');
    expect(res.body).not.toContain('POST /merchant-accounts');

    const started = await payLinkStarted(h);
    const opened = await openPage(h, pathOf(started.link.url));
    const sessionId = /(cs_test_[A-Za-z0-9]+)$/.exec(String(opened.headers.location))![1]!;
    h.stripe.world.expire(sessionId);
    const lapsed = await openPage(h, `${pathOf(started.link.url)}/done`);
    expect(lapsed.statusCode, lapsed.body).toBe(410);
    expect(headingOf(lapsed.body)).toBe('This payment was not finished');
  });

  it('answers the request log without the link\'s id', async () => {
    const { redactUrl } = await import('../../src/logger.js');
    expect(redactUrl('/pay/abcDEF123_-abcDEF123_-abcDEF12/done')).toBe('/pay/[redacted]/done');
    expect(redactUrl('/portal/abcDEF123_-abcDEF123_-abcDEF12')).toBe('/portal/[redacted]');
  });
});

const rowsCount = (result: unknown) => (Array.isArray(result) ? result.length : ((result as { rows: unknown[] }).rows?.length ?? 0));
