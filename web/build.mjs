// Builds the dashboard: node web/build.mjs OUTDIR (after npm ci --prefix web).
// Writes OUTDIR/index.html and OUTDIR/assets/app-<sha256>.js, OUTDIR/assets/app-<sha256>.css:
// src/main.js and everything it imports (uPlot and its CSS included) bundled and minified by
// esbuild, with content-hashed names that index.html references. Nothing inline (the page's
// CSP is script-src 'self'; style-src 'self'), nothing from another origin.
import * as esbuild from 'esbuild';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const out = process.argv[2];
if (!out) {
  console.error('usage: node web/build.mjs OUTDIR');
  process.exit(2);
}
const outdir = path.resolve(out);
const assets = path.join(outdir, 'assets');
fs.rmSync(assets, { recursive: true, force: true });
fs.mkdirSync(assets, { recursive: true });

// Built in memory, then named by a hash of each file's own bytes: the same sources give the
// same names wherever and from whatever directory they are built (esbuild's [hash] also
// covers paths).
const result = await esbuild.build({
  entryPoints: { app: path.join(here, 'src', 'main.js') },
  absWorkingDir: here,
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  outdir: assets,
  entryNames: '[name]',
  legalComments: 'eof',
  logLevel: 'warning',
  write: false,
});

let js = null;
let css = null;
for (const file of result.outputFiles) {
  const ext = path.extname(file.path);
  if (ext !== '.js' && ext !== '.css') throw new Error(`unexpected output ${file.path}`);
  const hash = createHash('sha256').update(file.contents).digest('hex').slice(0, 12);
  const name = `app-${hash}${ext}`;
  fs.writeFileSync(path.join(assets, name), file.contents);
  if (ext === '.js') js = name; else css = name;
}
if (!js || !css) throw new Error('esbuild made no JS or no CSS');

const template = fs.readFileSync(path.join(here, 'src', 'index.html'), 'utf8');
const html = template
  .replace('{{CSS}}', `/assets/${css}`)
  .replace('{{JS}}', `/assets/${js}`);
if (html.includes('{{')) throw new Error('index.html has a placeholder left');
fs.writeFileSync(path.join(outdir, 'index.html'), html);
console.log(`dashboard: ${path.join(outdir, 'index.html')}, assets/${js}, assets/${css}`);
