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
const { spawnSync } = require('node:child_process');
const { existsSync, rmSync } = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const VENV = path.join(ROOT, 'build', 'venvs', 'timm');
const PYTHON = path.join(VENV, 'bin', 'python');
const REQUIREMENTS = path.join(ROOT, 'scripts', 'catalog', 'requirements-timm.txt');
const PINNED = '1.0.31';

function run(command, args) {
  return spawnSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: 600_000 });
}

function ready() {
  return existsSync(PYTHON) && run(PYTHON, ['-c', `import timm, sys; sys.exit(timm.__version__ != "${PINNED}")`]).status === 0;
}

function main() {
  if (ready()) return 0;
  rmSync(VENV, { recursive: true, force: true });
  // --system-site-packages: Debian's CPU torch; --no-deps: pip would otherwise fetch a CUDA torch.
  const steps = [
    ['/usr/bin/python3', ['-m', 'venv', '--system-site-packages', VENV]],
    [PYTHON, ['-m', 'pip', 'install', '-q', '--no-deps', '-r', REQUIREMENTS]],
  ];
  for (const [command, args] of steps) {
    const result = run(command, args);
    if (result.status !== 0) {
      const why = (result.stderr || result.stdout || String(result.error ?? result.signal)).trim().split('\n').pop();
      console.log(`timm venv: not made (${path.basename(command)} ${args.slice(0, 2).join(' ')}: ${why}); the timm --check test will be skipped`);
      rmSync(VENV, { recursive: true, force: true });
      return 0;
    }
  }
  console.log(ready() ? `timm venv: made ${path.relative(ROOT, VENV)} (timm ${PINNED})` : 'timm venv: made, but timm does not import; the timm --check test will say why');
  return 0;
}

process.exitCode = main();
