import { webhookDelete } from '../support/operations.js';
import { describeSecurity } from '../support/security.js';

describeSecurity(webhookDelete);
