import { describeTransportErrors } from '../support/transport.js';
import { liveTokenMint } from './live-token.operation.js';

describeTransportErrors(liveTokenMint);
