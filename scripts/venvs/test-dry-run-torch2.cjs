#!/usr/bin/env node
/**
 * The dry run's tests (harness/tests/test_dry_run.py, test_dry_run_hub.py, test_dry_run_diffusers.py), the measured activations of models with fused attention (test_attention_saved.py) and the functional attention row (test_functional_rows.py) with PyTorch 2, in the venv
 * scripts/venvs/torch2-venv.cjs makes: `npm run test:python` runs them after the suite under
 * Debian's torch 1.13. Where the venv could not be made (no package index) it says they were skipped.
 */
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const path = require('node:path');
const { ROOT } = require('./makeVenv.cjs');

const python = path.join(ROOT, 'build', 'venvs', 'torch2', 'bin', 'python');
if (!existsSync(python)) {
  console.log('dry run tests with PyTorch 2: skipped (no build/venvs/torch2; node scripts/venvs/torch2-venv.cjs makes it)');
} else {
  const result = spawnSync(python, ['-m', 'pytest', 'harness/tests/test_dry_run.py', 'harness/tests/test_dry_run_hub.py', 'harness/tests/test_dry_run_diffusers.py', 'harness/tests/test_attention_saved.py', 'harness/tests/test_functional_rows.py', '-q', '-rs', '-p', 'no:cacheprovider'], { cwd: ROOT, stdio: 'inherit' });
  process.exitCode = result.status ?? 1;
}
