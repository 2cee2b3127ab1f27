import { apiKeyCreate } from '../support/operations.keys.js';
import { describeSecurity } from '../support/security.js';

describeSecurity(apiKeyCreate);
