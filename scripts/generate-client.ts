import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument, renderClientSchema, SCHEMA_FILE } from './openapi-document.js';

/** `npm run client:generate`: rewrites clients/typescript/src/schema.d.ts from the app's document. */
const document = await buildOpenApiDocument();
await writeFile(SCHEMA_FILE, await renderClientSchema(document));
const paths = Object.keys(document.paths as object).length;
process.stderr.write(`wrote ${fileURLToPath(SCHEMA_FILE)} (${paths} paths)\n`);
