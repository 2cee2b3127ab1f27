import { describe, expect, it } from 'vitest';
import { eventRows, expectSuccess, UUID } from '../support/api.js';
import { createTarget, getTarget, snowflake, targetBody } from '../support/catalogue.js';
import { useHarness, type Tenant } from '../support/harness.js';
import { targetCreate } from '../support/operations.catalogue.js';

const CREATED = 'Target created successfully';

describe(`${targetCreate.name}: happy`, () => {
  const h = useHarness();

  async function create(t: Tenant, payload: object) {
    const path = `${t.base}/targets`;
    const res = await t.request({ method: 'POST', url: path, payload });
    return { res, path, target: res.json().data };
  }

  it('answers 201 with the target: enabled, no parent, counts 0', async () => {
    const t = await h.tenant();
    const external = snowflake();
    const { res, path, target } = await create(t, { target_name: 'Gold role', platform: 'discord', kind: 'role', external_id: external });
    expectSuccess(res, {
      status: 201,
      method: 'POST',
      path,
      message: CREATED,
      data: {
        target_id: expect.stringMatching(UUID),
        target_name: 'Gold role',
        platform: 'discord',
        kind: 'role',
        external_id: external,
        is_enabled: true,
        plan_count: 0,
        parent_target_id: null,
        participant_count: 0,
        on_expiry: 'remove_role',
        health: 'ok',
        health_error: null,
      },
    });
    expect(await getTarget(t, target.target_id)).toStrictEqual(target);
  });

  it('writes one target.added event carrying the target the API answered', async () => {
    const t = await h.tenant();
    const { target } = await create(t, targetBody());
    expect(await eventRows(h, t.projectId)).toStrictEqual([{ type: 'target.added', project_id: t.projectId, data: { target } }]);
  });

  it('registers a disabled target', async () => {
    const t = await h.tenant();
    const { target } = await create(t, targetBody({ is_enabled: false }));
    expect(target.is_enabled).toBe(false);
  });

  it('registers a role inside a guild (parent_target_id)', async () => {
    const t = await h.tenant();
    const guild = await createTarget(t, { kind: 'guild', target_name: 'Server' });
    const { res, target } = await create(t, targetBody({ parent_target_id: guild.target_id }));
    expect(res.statusCode, res.body).toBe(201);
    expect(target.parent_target_id).toBe(guild.target_id);
  });

  it('accepts parent_target_id null', async () => {
    const t = await h.tenant();
    const { res, target } = await create(t, targetBody({ parent_target_id: null }));
    expect(res.statusCode, res.body).toBe(201);
    expect(target.parent_target_id).toBeNull();
  });

  it.each([
    ['discord', 'guild', '123456789012345678'],
    ['discord', 'channel', '1'],
    ['telegram', 'group', '-1001234567890'],
    ['telegram', 'channel', '@tenure_news'],
    ['telegram', 'channel', '777000'],
  ])('registers a %s %s with external_id %s', async (platform, kind, external_id) => {
    const t = await h.tenant();
    const { res, target } = await create(t, targetBody({ platform, kind, external_id }));
    expect(res.statusCode, res.body).toBe(201);
    expect(target).toMatchObject({ platform, kind, external_id });
  });

  it('allows the same external_id on the other platform and in another project', async () => {
    const t = await h.tenant();
    const external = '123456789';
    await createTarget(t, { platform: 'discord', kind: 'guild', external_id: external });
    const other = await create(t, targetBody({ platform: 'telegram', kind: 'group', external_id: external }));
    expect(other.res.statusCode, other.res.body).toBe(201);
    const elsewhere = await create(await h.tenant(), targetBody({ platform: 'discord', kind: 'guild', external_id: external }));
    expect(elsewhere.res.statusCode, elsewhere.res.body).toBe(201);
  });

  it('ignores unknown fields, computed ones included', async () => {
    const t = await h.tenant();
    const { res, target } = await create(t, targetBody({ plan_count: 9, participant_count: 9, target_id: 'forged' }));
    expect(res.statusCode, res.body).toBe(201);
    expect(target).toMatchObject({ plan_count: 0, participant_count: 0, target_id: expect.stringMatching(UUID) });
  });
});
