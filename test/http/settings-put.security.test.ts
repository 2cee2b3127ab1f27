import { settingPut } from '../support/operations.keys.js';
import { describeSecurity } from '../support/security.js';

describeSecurity(settingPut);
