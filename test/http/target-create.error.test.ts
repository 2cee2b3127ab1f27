import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectError, projectState } from '../support/api.js';
import { createTarget, targetBody } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { targetCreate } from '../support/operations.catalogue.js';

const EXTERNAL = 'external_id must be the platform id: up to 20 digits (a leading - for Telegram chats) or a Telegram @username';

describe(`${targetCreate.name}: errors`, () => {
  const h = useHarness();

  /** Posts `payload(t)` to a project that has a target; checks the answer and that nothing changed. */
  async function refused(payload: (t: Tenant) => Promise<unknown> | unknown, want: { status: number; code: string; message: unknown }) {
    const t = await h.tenant();
    await createTarget(t);
    const body = await payload(t);
    const path = `${t.base}/targets`;
    const before = await projectState(h, t.projectId);
    const res = await t.request({ method: 'POST', url: path, payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    expectError(res, { ...want, method: 'POST', path });
    expect(await projectState(h, t.projectId)).toStrictEqual(before);
  }

  const invalid = (message: unknown) => ({ status: 422, code: 'VALIDATION_ERROR', message });

  it('answers 409 CONFLICT for a second target with the same platform and external_id', async () => {
    let external = '';
    await refused(
      async (t) => {
        external = (await createTarget(t, { kind: 'guild' })).external_id;
        return targetBody({ kind: 'role', external_id: external, target_name: 'Other name' });
      },
      { status: 409, code: 'CONFLICT', message: expect.stringMatching(/^A discord target with external_id \d+ already exists in this project$/) },
    );
    expect(external).toMatch(/^\d+$/);
  });

  it.each(['target_name', 'platform', 'kind', 'external_id'])('answers 422 when %s is missing', async (field) => {
    const body: Record<string, unknown> = targetBody();
    delete body[field];
    await refused(() => body, invalid(`${field} is required`));
  });

  it.each([
    ['platform', 'slack', 'platform must be one of: discord, telegram'],
    ['platform', 'Discord', 'platform must be one of: discord, telegram'],
    ['kind', 'server', 'kind must be one of: guild, group, channel, role'],
    ['kind', null, 'kind must be one of: guild, group, channel, role'],
    ['target_name', '', 'target_name must be a non-blank string of at most 200 characters'],
    ['target_name', '  ', 'target_name must be a non-blank string of at most 200 characters'],
    ['target_name', 'x'.repeat(201), 'target_name must be a non-blank string of at most 200 characters'],
    ['is_enabled', 'yes', 'is_enabled must be true or false'],
    ['external_id', 'abc', EXTERNAL],
    ['external_id', '', EXTERNAL],
    ['external_id', '1'.repeat(21), EXTERNAL],
    ['external_id', 123456789, EXTERNAL],
    ['external_id', '@abc', EXTERNAL],
    ['parent_target_id', 'guild', 'parent_target_id must be a UUID'],
  ])('answers 422 for %s = %j', async (field, value, message) => {
    await refused(() => targetBody({ [field]: value }), invalid(message));
  });

  it.each([
    ['discord', 'group', 'kind group does not exist on discord; use one of: guild, role, channel'],
    ['telegram', 'role', 'kind role does not exist on telegram; use one of: group, channel'],
    ['telegram', 'guild', 'kind guild does not exist on telegram; use one of: group, channel'],
  ])('answers 422 for a %s %s', async (platform, kind, message) => {
    await refused(() => targetBody({ platform, kind, external_id: '-100123' }), invalid(message));
  });

  it.each(['-123456', '@tenure_news'])('answers 422 for a discord external_id of %s (snowflakes are digits)', async (external_id) => {
    await refused(
      () => targetBody({ platform: 'discord', kind: 'guild', external_id }),
      invalid('external_id of a discord target must be a snowflake: 1 to 20 digits'),
    );
  });

  it('answers 404 naming an unknown parent_target_id', async () => {
    const parent = randomUUID();
    await refused(() => targetBody({ parent_target_id: parent }), { status: 404, code: 'NOT_FOUND', message: `Parent target not found: ${parent}` });
  });

  it("answers 404 for a parent of another project", async () => {
    const theirs = await createTarget(await h.tenant(), { kind: 'guild' });
    await refused(() => targetBody({ parent_target_id: theirs.target_id }), {
      status: 404,
      code: 'NOT_FOUND',
      message: `Parent target not found: ${theirs.target_id}`,
    });
  });

  it('answers 422 for a parent on the other platform', async () => {
    await refused(
      async (t) => targetBody({ parent_target_id: (await createTarget(t, { platform: 'telegram', kind: 'group', external_id: '-100' })).target_id }),
      invalid('parent_target_id must be a discord target, not a telegram one'),
    );
  });

  it('answers 422 for a parent that cannot contain targets (a role)', async () => {
    await refused(
      async (t) => targetBody({ parent_target_id: (await createTarget(t, { kind: 'role' })).target_id }),
      invalid('parent_target_id must be a guild or group, not a role'),
    );
  });

  it.each([
    ['an array', [targetBody()]],
    ['a string', 'role'],
  ])('answers 422 for a body that is %s', async (_what, body) => {
    await refused(() => body, invalid(expect.stringMatching(/\S/)));
  });
});
