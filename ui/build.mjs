// Bundles the UI's sources (src/) into the server's resources, minified, so the jar serves it and
// the Maven build needs no Node. The output depends only on the sources and the locked packages:
// .ci/run rebuilds it and fails when it differs from the committed bundle.
//
//   npm ci && npm run build
import * as esbuild from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const out = '../server/src/main/resources/dev/tidemark/server/ui';
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const result = await esbuild.build({
  metafile: true,
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

// The licenses of the packages the bundle holds (every one asks that its notice travel with it).
const packages = new Set();
for (const input of Object.keys(result.metafile.inputs)) {
  const m = /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
  if (m) packages.add(m[1]);
}
let notices = 'The web UI bundle (app.js, app.css) contains these packages from the npm registry.\n';
for (const name of [...packages].sort()) {
  const dir = `node_modules/${name}`;
  const pkg = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8'));
  const file = readdirSync(dir).sort().find((f) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f));
  notices += `\n==== ${name} ${pkg.version} (${pkg.license ?? 'see below'})\n\n`;
  notices += file && existsSync(`${dir}/${file}`) ? readFileSync(`${dir}/${file}`, 'utf8').trim() + '\n' : '(no license file in the package)\n';
}
writeFileSync(`${out}/THIRD-PARTY-NOTICES.txt`, notices);

let total = 0;
for (const f of ['index.html', 'app.js', 'app.css']) {
  const bytes = readFileSync(`${out}/${f}`);
  const gz = gzipSync(bytes, { level: 9 }).length;
  total += gz;
  console.log(`${f}: ${bytes.length} bytes, ${gz} gzipped`);
}
console.log(`total gzipped: ${total} bytes`);
writeFileSync(`${out}/README`, 'Built by ui/build.mjs from ui/src; do not edit. Rebuild: cd ui && npm ci && npm run build\n');
