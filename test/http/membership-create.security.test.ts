import { membershipCreate } from '../support/operations.js';
import { describeSecurity } from '../support/security.js';

describeSecurity(membershipCreate);
