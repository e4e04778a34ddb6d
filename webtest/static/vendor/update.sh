#!/usr/bin/env bash
# Copy three.js from the npm package `three` (version pinned in package.json, exact tree in
# package-lock.json) into webtest/static/vendor/three/ with its licence, as one minified ES module
# (three.module.js + three.core.js bundled by esbuild; the code is three's, unchanged).
# Repeatable: `webtest/static/vendor/update.sh`, then commit webtest/static/vendor/.
# Nothing is loaded from a CDN at run time. See docs/rendering.md.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
src=node_modules/three
dst=three
rm -rf "$dst"
mkdir -p "$dst"
cp "$src/LICENSE" "$dst/LICENSE"
npx --no-install esbuild "$src/build/three.module.js" --bundle --minify --format=esm \
  --legal-comments=inline --log-level=warning --outfile="$dst/three.module.min.js"
version=$(node -p "require('./$src/package.json').version")
printf 'three %s (npm package "three", MIT licence in LICENSE), built by update.sh\n' "$version" > "$dst/VERSION"
rm -rf node_modules
echo "three $version -> $(pwd)/$dst"
