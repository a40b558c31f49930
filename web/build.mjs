// Placeholder build of the dashboard (issue 31) until the front end lands: copies
// src/index.html and src/assets/* into OUTDIR (node web/build.mjs OUTDIR), which the CMake
// build then compiles into the binary (cmake/PhWebAssets.cmake). The real build bundles and
// hashes the assets; the contract (docs/dashboard.md) is only: OUTDIR/index.html and
// OUTDIR/assets/*.
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const out = process.argv[2];
if (!out) {
  console.error('usage: node web/build.mjs OUTDIR');
  process.exit(2);
}
const src = join(dirname(fileURLToPath(import.meta.url)), 'src');
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });
copyFileSync(join(src, 'index.html'), join(out, 'index.html'));
for (const name of readdirSync(join(src, 'assets'))) {
  copyFileSync(join(src, 'assets', name), join(out, 'assets', name));
}
