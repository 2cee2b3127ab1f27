import type { HTTPMethods } from 'fastify';
import { createMembership, createWebhook } from './api.js';
import { future, userId, type Harness, type Tenant } from './harness.js';

/**
 * The operations under test, described once so that the shared-behaviour table
 * (test/http/shared.*.test.ts), the OpenAPI conformance test and the route suites build the same
 * requests. Export an Operation from any `*operations*.ts` or `*.operation.ts` file under test/
 * and the table has a row for it (test/support/operations.all.ts).
 */
export interface Operation {
  name: string;
  method: HTTPMethods;
  /** Status of a success, for the positive control. */
  successStatus: number;
  /** Seeds what the request acts on in `t`'s project and returns a request that would succeed. */
  prepare(h: Harness, t: Tenant): Promise<{ url: string; payload?: unknown }>;
  /**
   * A body the route refuses with 422; proves 401/403 are decided before validation. A route with
   * a body sets it to get the table's body cases too (400, 415, 413, exactly 1 MiB, which pads a
   * valid body with an ignored field).
   */
  invalidPayload?: unknown;
  /** The `Allow` header a wrong method on this path gets (docs/errors.md: 405 with Allow). */
  allow: string;
  /** A method this path does not answer. */
  wrongMethod: HTTPMethods;
  /** The success is a file (an export), not the envelope: its request id is in the header only. */
  file?: boolean;
}

export const extendOne: Operation = {
  name: 'PATCH /v2/projects/{project_id}/memberships/{user_id}/extend',
  method: 'PATCH',
  successStatus: 200,
  async prepare(_h, t) {
    const m = await createMembership(t);
    return { url: `${t.base}/memberships/${m.user_id}/extend`, payload: { extend: future(60).iso } };
  },
  invalidPayload: { extend: 'tomorrow' },
  allow: 'PATCH',
  wrongMethod: 'POST',
};

export const extendAll: Operation = {
  name: 'PATCH /v2/projects/{project_id}/memberships/extend',
  method: 'PATCH',
  successStatus: 200,
  async prepare(_h, t) {
    await createMembership(t);
    return { url: `${t.base}/memberships/extend`, payload: { extend: future(60).ms } };
  },
  invalidPayload: { extend: 123 },
  // GET and DELETE answer here too: `extend` fills the `{membership_id}` of those routes.
  allow: 'GET, PATCH, DELETE',
  wrongMethod: 'PUT',
};

export const webhookCreate: Operation = {
  name: 'POST /v2/projects/{project_id}/integrations/webhooks',
  method: 'POST',
  successStatus: 200,
  async prepare(_h, t) {
    return { url: `${t.base}/integrations/webhooks`, payload: { url: 'https://hooks.example.com/in' } };
  },
  invalidPayload: { url: 'not a url' },
  // GET lists the project's webhooks (test/webhooks/webhooks-api.test.ts).
  allow: 'GET, POST',
  wrongMethod: 'PATCH',
};

export const webhookDelete: Operation = {
  name: 'DELETE /v2/projects/{project_id}/integrations/webhooks/{webhook_id}',
  method: 'DELETE',
  successStatus: 200,
  async prepare(_h, t) {
    const hook = await createWebhook(t);
    return { url: `${t.base}/integrations/webhooks/${hook.id}` };
  },
  // GET reads and PATCH enables/disables the webhook (test/webhooks/webhooks-api.test.ts).
  allow: 'GET, PATCH, DELETE',
  wrongMethod: 'PUT',
};

export const membershipCreate: Operation = {
  name: 'POST /v2/projects/{project_id}/memberships',
  method: 'POST',
  successStatus: 201,
  async prepare(_h, t) {
    return { url: `${t.base}/memberships`, payload: { user_id: userId(), end_date: future(30).iso, user_name: { first_name: 'Ada', username: 'ada' } } };
  },
  invalidPayload: { user_id: 'not digits', end_date: future(30).iso },
  allow: 'GET, POST',
  wrongMethod: 'PUT',
};

export const membershipList: Operation = {
  name: 'GET /v2/projects/{project_id}/memberships',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    await createMembership(t);
    return { url: `${t.base}/memberships?limit=10&offset=0` };
  },
  allow: 'GET, POST',
  wrongMethod: 'DELETE',
};

export const membershipGet: Operation = {
  name: 'GET /v2/projects/{project_id}/memberships/{membership_id}',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    const m = await createMembership(t);
    return { url: `${t.base}/memberships/${m.membership_id}` };
  },
  allow: 'GET, DELETE',
  wrongMethod: 'POST',
};

export const membershipDelete: Operation = {
  name: 'DELETE /v2/projects/{project_id}/memberships/{membership_id}',
  method: 'DELETE',
  successStatus: 204,
  async prepare(_h, t) {
    const m = await createMembership(t);
    return { url: `${t.base}/memberships/${m.membership_id}` };
  },
  allow: 'GET, DELETE',
  wrongMethod: 'PATCH',
};

/** The path of a URL as the envelope reports it: no query string. */
export const pathOf = (url: string): string => url.split('?')[0]!;
