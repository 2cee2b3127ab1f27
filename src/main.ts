import { serve } from './server.js';

await serve();
