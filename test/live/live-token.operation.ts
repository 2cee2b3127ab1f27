import type { Operation } from '../support/operations.js';

/** The token minting route, described for the shared security and transport generators. */
export const liveTokenMint: Operation = {
  name: 'POST /v2/projects/{project_id}/integrations/live-updates/tokens',
  method: 'POST',
  successStatus: 200,
  prepare(_h, t) {
    return Promise.resolve({ url: `${t.base}/integrations/live-updates/tokens` });
  },
  allow: 'POST',
  wrongMethod: 'GET',
};
