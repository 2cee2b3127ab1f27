import { userId } from './harness.js';
import { ban, createKey, seedUser } from './keys.js';
import type { Operation } from './operations.js';

/** The API key, settings, users and bans operations, rows of the shared-behaviour table (test/http/shared.*.test.ts). */

export const apiKeyCreate: Operation = {
  name: 'POST /v2/projects/{project_id}/integrations/api-keys',
  method: 'POST',
  successStatus: 200,
  async prepare(_h, t) {
    return { url: `${t.base}/integrations/api-keys`, payload: { label: 'ci' } };
  },
  invalidPayload: { label: '' },
  allow: 'GET, POST',
  wrongMethod: 'PUT',
};

export const apiKeyList: Operation = {
  name: 'GET /v2/projects/{project_id}/integrations/api-keys',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    return { url: `${t.base}/integrations/api-keys?limit=10&offset=0` };
  },
  allow: 'GET, POST',
  wrongMethod: 'DELETE',
};

export const apiKeyRevoke: Operation = {
  name: 'DELETE /v2/projects/{project_id}/integrations/api-keys/{key_id}',
  method: 'DELETE',
  successStatus: 200,
  async prepare(_h, t) {
    const second = await createKey(t);
    return { url: `${t.base}/integrations/api-keys/${second.metadata.id}` };
  },
  allow: 'DELETE',
  wrongMethod: 'GET',
};

export const settingsGetAll: Operation = {
  name: 'GET /v2/projects/{project_id}/settings',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    return { url: `${t.base}/settings` };
  },
  allow: 'GET, PATCH',
  wrongMethod: 'POST',
};

/**
 * No `invalidPayload`: the shared body suite pads a valid body with an unknown field, which this
 * route rightly refuses (unknown keys → 422); its body cases live in settings-patch.error.test.ts.
 */
export const settingsPatch: Operation = {
  name: 'PATCH /v2/projects/{project_id}/settings',
  method: 'PATCH',
  successStatus: 204,
  async prepare(_h, t) {
    return { url: `${t.base}/settings`, payload: { default_currency: 'EUR', ai_enabled: true } };
  },
  allow: 'GET, PATCH',
  wrongMethod: 'PUT',
};

export const settingGet: Operation = {
  name: 'GET /v2/projects/{project_id}/settings/{key}',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    return { url: `${t.base}/settings/default_language` };
  },
  allow: 'GET, PUT',
  wrongMethod: 'DELETE',
};

export const settingPut: Operation = {
  name: 'PUT /v2/projects/{project_id}/settings/{key}',
  method: 'PUT',
  successStatus: 204,
  async prepare(_h, t) {
    return { url: `${t.base}/settings/timezone_preference`, payload: { value: 'Europe/Berlin' } };
  },
  invalidPayload: { value: 'Mars/Olympus_Mons' },
  allow: 'GET, PUT',
  wrongMethod: 'PATCH',
};

export const userList: Operation = {
  name: 'GET /v2/projects/{project_id}/users',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    await seedUser(t, { first_name: 'Ada', username: 'ada' });
    return { url: `${t.base}/users?limit=10&offset=0` };
  },
  allow: 'GET',
  wrongMethod: 'POST',
};

export const userSearch: Operation = {
  name: 'GET /v2/projects/{project_id}/users/search',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    await seedUser(t, { first_name: 'Grace', username: 'hopper' });
    return { url: `${t.base}/users/search?search=hop` };
  },
  allow: 'GET',
  wrongMethod: 'DELETE',
};

export const userGet: Operation = {
  name: 'GET /v2/projects/{project_id}/users/{user_id}',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    return { url: `${t.base}/users/${await seedUser(t, { username: 'lovelace' })}` };
  },
  allow: 'GET',
  wrongMethod: 'PATCH',
};

export const userBan: Operation = {
  name: 'PUT /v2/projects/{project_id}/ban/{user_id}',
  method: 'PUT',
  successStatus: 200,
  async prepare(_h, t) {
    return { url: `${t.base}/ban/${userId()}`, payload: { reason: 'spam' } };
  },
  invalidPayload: { reason: 42 },
  allow: 'PUT, DELETE',
  wrongMethod: 'POST',
};

export const userUnban: Operation = {
  name: 'DELETE /v2/projects/{project_id}/ban/{user_id}',
  method: 'DELETE',
  successStatus: 204,
  async prepare(_h, t) {
    const id = userId();
    await ban(t, id, 'spam');
    return { url: `${t.base}/ban/${id}` };
  },
  allow: 'PUT, DELETE',
  wrongMethod: 'GET',
};
