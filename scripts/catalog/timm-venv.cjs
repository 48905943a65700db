#!/usr/bin/env node
/**
 * The timm venv of scripts/catalog/requirements-timm.txt (timm 1.0.31 over Debian's torch 1.13),
 * made in build/venvs/timm when it is missing, so `npm run test:python` re-measures models with
 * timm itself and compares them with the committed catalog (harness/tests/test_timm_catalog.py)
 * on any machine that reaches the Python package index, CI included.
 *
 *   node scripts/catalog/timm-venv.cjs     make it (a few seconds; nothing when it is there)
 *
 * Without the package index it says so in one line and exits 0: that test then reports itself
 * skipped, naming the missing venv.
 */
'use strict';
const path = require('node:path');
const { makeVenv } = require('../venvs/makeVenv.cjs');

const PINNED = '1.0.31';

process.exitCode = makeVenv({
  name: 'timm',
  requirements: path.join(__dirname, 'requirements-timm.txt'),
  probe: `import timm, sys; sys.exit(timm.__version__ != "${PINNED}")`,
  // --system-site-packages: Debian's CPU torch; --no-deps: pip would otherwise fetch a CUDA torch.
  systemSitePackages: true,
  noDeps: true,
  skipped: 'the timm --check test will be skipped',
});
