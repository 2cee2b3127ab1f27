import { describe, expect, it } from 'vitest';
import { useHarness } from '../support/harness.js';
import { openPortal, paidMember } from '../support/portal.js';

/** docs/portal.md, "Security": behind https (TENURE_PUBLIC_URL), the portal's cookies are Secure too. */
describe('the portal behind https', () => {
  const h = useHarness({ env: { TENURE_PUBLIC_URL: 'https://members.example.org' } });

  it('sets its session and CSRF cookies Secure, HTTP-only and same-site, scoped to the portal', async () => {
    const m = await paidMember(h);
    expect(m.portalUrl.startsWith('https://members.example.org/portal/')).toBe(true);
    const { page } = await openPortal(h, m.portalPath);
    const session = page.cookies.find((c) => c.name === 'tenure_portal');
    const csrf = page.cookies.find((c) => c.name === 'tenure_csrf');
    expect(session).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Strict', path: m.portalPath, maxAge: 1800 });
    expect(csrf).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Strict', path: '/portal/' });
    // The page's forms post under the same prefix.
    expect(page.body).toContain(`action="${m.portalPath}/billing"`);
  });
});
