/**
 * Makes a Python venv from a pinned requirements file when it is missing or stale, for the
 * interpreters tests and evaluations run beside Debian's /usr/bin/python3 (scripts/catalog/timm-venv.cjs,
 * scripts/venvs/torch2-venv.cjs). Without the package index it says so in one line and leaves no
 * half-made venv: the tests that need it then report themselves skipped, naming it.
 */
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync, rmSync } = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');

function run(command, args, timeout = 1_200_000) {
  return spawnSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout });
}

/**
 * `name`: the venv's folder under build/venvs; `requirements`: its pins; `probe`: Python code that
 * exits 0 when the venv is what the pins say; `systemSitePackages`/`noDeps`: over Debian's torch,
 * without letting pip fetch another; `skipped`: what is skipped when it cannot be made.
 */
function makeVenv({ name, requirements, probe, systemSitePackages = false, noDeps = false, skipped }) {
  const venv = path.join(ROOT, 'build', 'venvs', name);
  const python = path.join(venv, 'bin', 'python');
  const ready = () => existsSync(python) && run(python, ['-c', probe]).status === 0;
  if (ready()) return 0;
  rmSync(venv, { recursive: true, force: true });
  const steps = [
    ['/usr/bin/python3', ['-m', 'venv', ...(systemSitePackages ? ['--system-site-packages'] : []), venv]],
    [python, ['-m', 'pip', 'install', '-q', '--disable-pip-version-check', ...(noDeps ? ['--no-deps'] : []), '-r', requirements]],
  ];
  for (const [command, args] of steps) {
    const result = run(command, args);
    if (result.status !== 0) {
      const why = (result.stderr || result.stdout || String(result.error ?? result.signal)).trim().split('\n').pop();
      console.log(`${name} venv: not made (${path.basename(command)} ${args.slice(0, 2).join(' ')}: ${why}); ${skipped}`);
      rmSync(venv, { recursive: true, force: true });
      return 0;
    }
  }
  console.log(ready() ? `${name} venv: made ${path.relative(ROOT, venv)}` : `${name} venv: made, but it does not pass its check; ${skipped}`);
  return 0;
}

module.exports = { makeVenv, ROOT };
