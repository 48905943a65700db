#!/usr/bin/env bash
# npm run test:package: builds every .vsix, checks what each one carries (test/package/*.package.test.ts),
# then runs phase A of the end-to-end test on two of them installed into code-server: linux-x64
# (native onnxruntime) and darwin-x64 (no onnxruntime-node at all: on this Linux machine the
# extension host takes the WebAssembly path, as on an Intel Mac; the ensemble checks fail without it).
set -euo pipefail
cd "$(dirname "$0")/../.."
npm run package
npx mocha --no-config --timeout 60000 'out/test/package/*.package.test.js'
version=$(node -p 'require("./package.json").version')
for target in linux-x64 darwin-x64; do
  GPU_ESTIMATOR_E2E_PHASES=ui GPU_ESTIMATOR_E2E_OUT=".e2e/out-vsix-$target" \
    GPU_ESTIMATOR_E2E_VSIX="build/vsix/gpu-estimator-$target-$version.vsix" bash test/e2e/run.sh
done
