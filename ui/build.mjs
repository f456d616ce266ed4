// Bundles the UI's sources (src/) into the server's resources, minified, so the jar serves it and
// the Maven build needs no Node. The output depends only on the sources and the locked packages:
// .ci/run rebuilds it and fails when it differs from the committed bundle.
//
//   npm ci && npm run build
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const out = '../server/src/main/resources/dev/tidemark/server/ui';
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

await esbuild.build({
  entryPoints: { app: 'src/main.ts' },
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  legalComments: 'linked',
  charset: 'utf8',
  sourcemap: false,
  outdir: out,
  logLevel: 'warning',
});
copyFileSync('src/index.html', `${out}/index.html`);

let total = 0;
for (const f of ['index.html', 'app.js', 'app.css']) {
  const bytes = readFileSync(`${out}/${f}`);
  const gz = gzipSync(bytes, { level: 9 }).length;
  total += gz;
  console.log(`${f}: ${bytes.length} bytes, ${gz} gzipped`);
}
console.log(`total gzipped: ${total} bytes`);
writeFileSync(`${out}/README`, 'Built by ui/build.mjs from ui/src; do not edit. Rebuild: cd ui && npm ci && npm run build\n');
