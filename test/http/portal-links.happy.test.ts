import { describe, expect, it } from 'vitest';
import { expectSuccess, ISO_MS } from '../support/api.js';
import { headingOf, openPage, pathOf, payLinkStarted, portalLinksPath } from '../support/front-desk.js';
import { useHarness } from '../support/harness.js';
import { deliverAll } from '../support/payments.js';

/** A member who paid through a pay link, and their portal link. */
async function paidMember(h: ReturnType<typeof useHarness>) {
  const started = await payLinkStarted(h, { recurring: true });
  const opened = await openPage(h, pathOf(started.link.url));
  const sessionId = /(cs_test_[A-Za-z0-9]+)$/.exec(String(opened.headers.location))![1]!;
  await deliverAll(h, started.stripe, h.stripe.world.pay(sessionId));
  const res = await started.t.request({ method: 'POST', url: portalLinksPath(started.t, started.user) });
  return { ...started, sessionId, res, portal: res.json().data as { url: string; expires_at: string } };
}

const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
const cookieHeader = (res: { cookies: { name: string; value: string }[] }) => res.cookies.map((c) => `${c.name}=${c.value}`).join('; ');

describe('POST /v2/projects/{project_id}/users/{user_id}/portal-links and the portal page: happy', () => {
  const h = useHarness();

  it('makes a single-use link valid 15 minutes at TENURE_PUBLIC_URL', async () => {
    const { t, user, res, portal } = await paidMember(h);
    expectSuccess(res, { method: 'POST', path: portalLinksPath(t, user), message: 'Portal link created successfully', data: { url: expect.any(String), expires_at: expect.stringMatching(ISO_MS) } });
    expect(portal.url).toMatch(new RegExp(`^${h.config.frontDesk.publicUrl}/portal/[A-Za-z0-9_-]{32}$`));
    expect(Math.abs(Date.parse(portal.expires_at) - Date.now() - 15 * 60_000)).toBeLessThan(60_000);
  });

  it('shows the member their memberships and payments; the browser that opened it keeps it, any other gets a 410', async () => {
    const { portal } = await paidMember(h);
    const first = await openPage(h, pathOf(portal.url));
    expect(first.statusCode, first.body).toBe(200);
    expect(headingOf(first.body)).toBe('Your memberships');
    expect(first.body).toContain('Gold');
    expect(first.body).toContain('Renews on ');
    expect(first.body).toContain('10.00 USD');
    expect(first.body).toContain('Manage billing');
    const session = first.cookies.find((c) => c.name === 'tenure_portal')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: pathOf(portal.url) });
    const again = await openPage(h, pathOf(portal.url), { headers: { cookie: cookieHeader(first) } });
    expect(again.statusCode, again.body).toBe(200);
    const elsewhere = await openPage(h, pathOf(portal.url));
    expect(elsewhere.statusCode).toBe(410);
    expect(headingOf(elsewhere.body)).toBe('This link has been used');
  });

  it('Manage billing posts with its CSRF token and goes to a Stripe billing portal session of the member\'s customer, which returns to the page', async () => {
    const { portal, sessionId } = await paidMember(h);
    const page = await openPage(h, pathOf(portal.url));
    const token = csrfOf(page.body);
    expect(token).toBeDefined();
    const res = await openPage(h, `${pathOf(portal.url)}/billing`, {
      method: 'POST',
      headers: { cookie: cookieHeader(page), 'content-type': 'application/x-www-form-urlencoded' },
      payload: `_csrf=${encodeURIComponent(token!)}`,
    });
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toMatch(/^https:\/\/billing\.stripe\.com\/p\/session\//);
    const made = h.stripe.portalSessions.at(-1)!;
    expect(made.url).toBe(res.headers.location);
    expect(made.customer).toBe(h.stripe.world.session(sessionId).customer);
    expect(made.return_url).toBe(portal.url);
  });
});
