import { describeSecurity } from '../support/security.js';
import { describeTransportErrors } from '../support/transport.js';
import { deliveryGet, deliveryList, deliveryReplay, webhookReplayRange } from '../support/webhook-operations.js';

for (const op of [deliveryList, deliveryGet, deliveryReplay, webhookReplayRange]) {
  describeSecurity(op);
  describeTransportErrors(op);
}
