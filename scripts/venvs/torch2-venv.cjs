#!/usr/bin/env node
/**
 * The PyTorch 2 venv of scripts/venvs/requirements-torch2.txt (PyTorch 2.4.1 with Lightning), made in
 * build/venvs/torch2 when it is missing, so `npm run test:python` runs the dry run's tests with
 * PyTorch 2 as well as with Debian's torch 1.13: users' interpreters have PyTorch 2.
 *
 *   node scripts/venvs/torch2-venv.cjs     make it (a minute or two, some 3 GB; nothing when it is there)
 */
'use strict';
const path = require('node:path');
const { makeVenv } = require('./makeVenv.cjs');

process.exitCode = makeVenv({
  name: 'torch2',
  requirements: path.join(__dirname, 'requirements-torch2.txt'),
  // A venv made from older pins is made again: the pins name the transformers it needs.
  probe: 'import sys, torch, lightning, transformers, peft, datasets, galore_torch, lomo_optim, diffusers; sys.exit(not (torch.__version__.startswith("2.4.1") and transformers.__version__ == "4.51.3" and peft.__version__ == "0.15.2"))',
  noDeps: true,
  skipped: 'the dry run\'s tests run with Debian\'s torch 1.13 only',
});
