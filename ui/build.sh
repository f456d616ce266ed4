#!/usr/bin/env bash
# Rebuilds the web UI's bundle (server/src/main/resources/dev/tidemark/server/ui/) from ui/src with
# the packages package-lock.json pins (npm ci, then ui/build.mjs: esbuild, minified).
#   ui/build.sh          rebuild; commit the bundle with the sources
#   ui/build.sh --check  rebuild and fail when the bundle differs from the committed one (CI)
# Needs Node.js 18 or newer and npm (Debian: apt-get install nodejs npm); reaches only the npm registry.
set -euo pipefail
cd "$(dirname "$0")"
bundle=../server/src/main/resources/dev/tidemark/server/ui
npm ci --no-audit --no-fund --loglevel=error
node build.mjs
if [ "${1:-}" = "--check" ]; then
  if ! git diff --quiet -- "$bundle" || [ -n "$(git ls-files --others --exclude-standard -- "$bundle")" ]; then
    git status --short -- "$bundle"
    git diff --stat -- "$bundle"
    echo "The committed web UI bundle is not what ui/src builds: run ui/build.sh and commit the bundle." >&2
    exit 1
  fi
  echo "The committed web UI bundle matches a fresh build of ui/src."
fi
