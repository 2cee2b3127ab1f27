// Builds dist/ (`npm run build`) only when a source is newer than the build. `npm install` builds
// once (the `prepare` script), so `npm test` and `npm start` right after it start at once instead
// of compiling the same sources again; after an edit they rebuild as before. Some tests start
// dist/main.js and dist/cli/main.js as real processes, so dist/ must match src/ when they run.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Every file under `dir`, recursively. */
function files(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath ?? e.path, e.name));
}

const mtime = (file) => statSync(file).mtimeMs;
const inputs = [...files(path.join(root, 'src')), path.join(root, 'scripts', 'build.mjs'), ...['tsconfig.json', 'tsconfig.build.json'].map((f) => path.join(root, f))];
const outputs = files(path.join(root, 'dist')).filter((f) => f.endsWith('.js'));

// The build (scripts/build.mjs) writes every output each time, so the newest output is when the
// last build ran (the oldest may be left over from a source since deleted).
const newestInput = Math.max(...inputs.filter(existsSync).map(mtime));
const lastBuild = outputs.length ? Math.max(...outputs.map(mtime)) : -Infinity;
if (lastBuild >= newestInput) process.exit(0);

const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
process.exit(build.status ?? 1);
