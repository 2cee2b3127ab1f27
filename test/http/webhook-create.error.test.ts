import { describe, expect, it } from 'vitest';
import { expectError, projectState } from '../support/api.js';
import { useHarness } from '../support/harness.js';
import { webhookCreate } from '../support/operations.js';

describe(`${webhookCreate.name}: errors`, () => {
  const h = useHarness();

  /** Sends `payload` and expects a 422 error object with `message`; no webhook is stored. */
  async function refused(payload: string | object | undefined, message: string) {
    const t = await h.tenant();
    const path = `${t.base}/integrations/webhooks`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({
      method: 'POST',
      url: path,
      ...(payload === undefined ? {} : typeof payload === 'string' ? { payload, headers: { 'content-type': 'application/json' } } : { payload }),
    });
    expectError(res, { status: 422, code: 'VALIDATION_ERROR', method: 'POST', path, message });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  }

  const ABSOLUTE = 'url must be an absolute http or https URL';

  it.each([
    ['not a URL', 'not a url', ABSOLUTE],
    ['a relative path', '/hooks/in', ABSOLUTE],
    ['a host without a scheme', 'hooks.example.com/in', ABSOLUTE],
    ['the empty string', '', ABSOLUTE],
    ['ftp:', 'ftp://files.example.com/hook', ABSOLUTE],
    ['file:', 'file:///etc/passwd', ABSOLUTE],
    ['javascript:', 'javascript:alert(1)', ABSOLUTE],
    ['data:', 'data:text/plain,hello', ABSOLUTE],
    ['wss:', 'wss://hooks.example.com/in', ABSOLUTE],
    ['http: while private targets are not allowed', 'http://hooks.example.com/in', 'url must use https (a receiver on this machine or a private network is allowed only when the server runs with TENURE_WEBHOOK_ALLOW_PRIVATE=true)'],
    ['credentials', 'https://user:secret@hooks.example.com/in', 'url must not contain credentials'],
    ['a user name only', 'https://user@hooks.example.com/in', 'url must not contain credentials'],
    ['2049 characters', `https://hooks.example.com/${'a'.repeat(2049 - 26)}`, 'url must be at most 2048 characters'],
    ['a megabyte-long URL', `https://hooks.example.com/${'a'.repeat(1000 * 1000)}`, 'url must be at most 2048 characters'],
  ])('answers 422 for %s', async (_what, url, message) => {
    if (message.includes('2048')) expect(url.length).toBeGreaterThan(2048);
    await refused({ url }, message);
  });

  it.each([
    ['a number', 42],
    ['null', null],
    ['an array', ['https://hooks.example.com/in']],
    ['an object', { href: 'https://hooks.example.com/in' }],
    ['a boolean', true],
  ])('answers 422 for a url that is %s', async (_what, url) => {
    await refused({ url }, 'url must be a string');
  });

  it('answers 422 when url is missing', async () => {
    await refused({ href: 'https://hooks.example.com/in' }, 'url is required');
  });

  it.each([
    ['no body at all', undefined],
    ['[]', '[]'],
    ['null', 'null'],
    ['a JSON string', '"https://hooks.example.com/in"'],
  ])('answers 422 for a body of %s', async (_what, payload) => {
    await refused(payload, 'body must be object');
  });
});
