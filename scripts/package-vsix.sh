#!/usr/bin/env bash
# Packs the extension as a Linux x64 .vsix (onnxruntime-node's native runtime is per platform).
# `npm run package` builds first. vsce 3.7.1 is the last release that runs on Node 20.
set -euo pipefail
cd "$(dirname "$0")/.."
node esbuild.config.mjs --production
npx --yes @vscode/vsce@3.7.1 package --target linux-x64 --allow-missing-repository "$@"
