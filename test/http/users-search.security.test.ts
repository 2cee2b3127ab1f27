import { userSearch } from '../support/operations.keys.js';
import { describeSecurity } from '../support/security.js';

describeSecurity(userSearch);
