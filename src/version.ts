import { readFileSync } from 'node:fs';

/** tenure's version, from package.json (the same file for src/ under tsx and dist/ once built). */
export const TENURE_VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
