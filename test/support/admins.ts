import { expect } from 'vitest';
import type { AdminView } from '../../src/domain/admins/admin.view.js';
import type { Tenant } from './harness.js';
import { seedUser } from './keys.js';

/** The admins routes' base of a tenant. */
export const adminsPath = (t: Tenant): string => `${t.base}/admins`;

/** A user seen by the project, made an admin with `permissions` through the API. */
export async function createAdmin(t: Tenant, permissions: string[] = ['memberships:read'], name: { first_name?: string | null; username?: string | null } | null = null): Promise<AdminView> {
  const userId = await seedUser(t, name);
  const res = await t.request({ method: 'POST', url: adminsPath(t), payload: { user_id: userId, permissions } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}
