import { randomUUID } from 'node:crypto';
import { createPlan, createTarget, grant, planBody, targetBody } from './catalogue.js';
import type { Operation } from './operations.js';

/** The plan and target operations, rows of the shared-behaviour table (test/http/shared.*.test.ts). */

export const planList: Operation = {
  name: 'GET /v2/projects/{project_id}/plans',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    await createPlan(t);
    return { url: `${t.base}/plans?limit=10&offset=0` };
  },
  allow: 'GET, POST',
  wrongMethod: 'DELETE',
};

export const planCreate: Operation = {
  name: 'POST /v2/projects/{project_id}/plans',
  method: 'POST',
  successStatus: 201,
  async prepare(_h, t) {
    return { url: `${t.base}/plans`, payload: planBody() };
  },
  invalidPayload: planBody({ plan_price: '-1' }),
  allow: 'GET, POST',
  wrongMethod: 'PUT',
};

export const planGet: Operation = {
  name: 'GET /v2/projects/{project_id}/plans/{plan_id}',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    const plan = await createPlan(t);
    return { url: `${t.base}/plans/${plan.plan_id}` };
  },
  allow: 'GET, PATCH, DELETE',
  wrongMethod: 'POST',
};

export const planUpdate: Operation = {
  name: 'PATCH /v2/projects/{project_id}/plans/{plan_id}',
  method: 'PATCH',
  successStatus: 200,
  async prepare(_h, t) {
    const plan = await createPlan(t);
    return { url: `${t.base}/plans/${plan.plan_id}`, payload: { plan_name: 'Platinum' } };
  },
  invalidPayload: { plan_duration: 'forever' },
  allow: 'GET, PATCH, DELETE',
  wrongMethod: 'PUT',
};

export const planDelete: Operation = {
  name: 'DELETE /v2/projects/{project_id}/plans/{plan_id}',
  method: 'DELETE',
  successStatus: 204,
  async prepare(_h, t) {
    const plan = await createPlan(t);
    return { url: `${t.base}/plans/${plan.plan_id}` };
  },
  allow: 'GET, PATCH, DELETE',
  wrongMethod: 'POST',
};

export const planTargetAdd: Operation = {
  name: 'POST /v2/projects/{project_id}/plans/{plan_id}/targets/{target_id}',
  method: 'POST',
  successStatus: 200,
  async prepare(_h, t) {
    const [plan, target] = [await createPlan(t), await createTarget(t)];
    return { url: `${t.base}/plans/${plan.plan_id}/targets/${target.target_id}` };
  },
  allow: 'POST, DELETE',
  wrongMethod: 'GET',
};

export const planTargetRemove: Operation = {
  name: 'DELETE /v2/projects/{project_id}/plans/{plan_id}/targets/{target_id}',
  method: 'DELETE',
  successStatus: 204,
  async prepare(_h, t) {
    const [plan, target] = [await createPlan(t), await createTarget(t)];
    await grant(t, plan.plan_id, target.target_id);
    return { url: `${t.base}/plans/${plan.plan_id}/targets/${target.target_id}` };
  },
  allow: 'POST, DELETE',
  wrongMethod: 'PATCH',
};

export const targetCreate: Operation = {
  name: 'POST /v2/projects/{project_id}/targets',
  method: 'POST',
  successStatus: 201,
  async prepare(_h, t) {
    return { url: `${t.base}/targets`, payload: targetBody() };
  },
  invalidPayload: targetBody({ platform: 'slack' }),
  allow: 'GET, POST, PATCH',
  wrongMethod: 'PUT',
};

export const targetList: Operation = {
  name: 'GET /v2/projects/{project_id}/targets',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    await createTarget(t);
    return { url: `${t.base}/targets?limit=10&offset=0` };
  },
  allow: 'GET, POST, PATCH',
  wrongMethod: 'DELETE',
};

export const targetBatchUpdate: Operation = {
  name: 'PATCH /v2/projects/{project_id}/targets',
  method: 'PATCH',
  successStatus: 200,
  async prepare(_h, t) {
    const [a, b] = [await createTarget(t), await createTarget(t)];
    return {
      url: `${t.base}/targets`,
      payload: [
        { target_id: a.target_id, is_enabled: false },
        { target_id: b.target_id, target_name: 'Renamed' },
      ],
    };
  },
  invalidPayload: [{ target_id: randomUUID(), is_enabled: 'no' }],
  allow: 'GET, POST, PATCH',
  wrongMethod: 'DELETE',
};

export const targetGet: Operation = {
  name: 'GET /v2/projects/{project_id}/targets/{target_id}',
  method: 'GET',
  successStatus: 200,
  async prepare(_h, t) {
    const target = await createTarget(t);
    return { url: `${t.base}/targets/${target.target_id}` };
  },
  allow: 'GET, PATCH, DELETE',
  wrongMethod: 'POST',
};

export const targetUpdate: Operation = {
  name: 'PATCH /v2/projects/{project_id}/targets/{target_id}',
  method: 'PATCH',
  successStatus: 200,
  async prepare(_h, t) {
    const target = await createTarget(t);
    return { url: `${t.base}/targets/${target.target_id}`, payload: { is_enabled: false } };
  },
  invalidPayload: { target_name: '' },
  allow: 'GET, PATCH, DELETE',
  wrongMethod: 'PUT',
};

export const targetDelete: Operation = {
  name: 'DELETE /v2/projects/{project_id}/targets/{target_id}',
  method: 'DELETE',
  successStatus: 204,
  async prepare(_h, t) {
    const target = await createTarget(t);
    return { url: `${t.base}/targets/${target.target_id}` };
  },
  allow: 'GET, PATCH, DELETE',
  wrongMethod: 'POST',
};
