import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { renderClientSchema, SCHEMA_FILE } from '../../../scripts/openapi-document.js';
import { generatedDocument } from '../../../test/openapi/openapi-support.js';

describe('clients/typescript/src/schema.d.ts', () => {
  it('is what `npm run client:generate` makes from the current routes (run it after changing a route schema)', async () => {
    const fresh = await renderClientSchema(await generatedDocument());
    const committed = await readFile(SCHEMA_FILE, 'utf8');
    // A plain comparison first: a diff of 10 000 lines helps nobody, the message says what to do.
    expect(committed === fresh, 'schema.d.ts is stale: run `npm run client:generate` and commit the result').toBe(true);
  });
});
