import { describeSecurity } from '../support/security.js';
import { liveTokenMint } from './live-token.operation.js';

describeSecurity(liveTokenMint);
