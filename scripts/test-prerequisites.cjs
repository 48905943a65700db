#!/usr/bin/env node
/**
 * The system packages `npm run test:all` needs beyond Node, checked before any test starts, so a
 * fresh machine either gets them (root with apt-get: installed here) or stops at once with one
 * line naming what is missing, instead of failing deep inside a suite or leaving tests pending.
 *
 *   node scripts/test-prerequisites.cjs          check, and install with apt-get when root
 *   node scripts/test-prerequisites.cjs --check  check only (exit 1 and one line when something is missing)
 *
 * CommonJS, no dependencies and no build step: it runs before `npm run build`.
 */
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync } = require('node:fs');

/** Debian's Python with torch: the harness tests and the remote integration tests run with it. */
const PYTHON = '/usr/bin/python3';

/**
 * What the tests need, each with the Debian package that provides it and the suite that needs it.
 * A probe answers true when the thing is there.
 */
const REQUIREMENTS = [
  { what: 'Python 3 at /usr/bin/python3', pkg: 'python3', suite: 'Python tests', probe: () => existsSync(PYTHON) },
  { what: 'PyTorch for /usr/bin/python3', pkg: 'python3-torch', suite: 'Python tests', probe: () => pythonImports('torch') },
  { what: 'torchvision for /usr/bin/python3', pkg: 'python3-torchvision', suite: 'Python tests', probe: () => pythonImports('torchvision') },
  { what: 'NumPy for /usr/bin/python3', pkg: 'python3-numpy', suite: 'Python tests', probe: () => pythonImports('numpy') },
  { what: 'PyYAML for /usr/bin/python3', pkg: 'python3-yaml', suite: 'Python tests', probe: () => pythonImports('yaml') },
  { what: 'pytest for /usr/bin/python3', pkg: 'python3-pytest', suite: 'Python tests', probe: () => pythonImports('pytest') },
  { what: 'sshd (OpenSSH server) and its privilege-separation user', pkg: 'openssh-server', suite: 'remote integration tests', probe: () => existsSync('/usr/sbin/sshd') && succeeds('getent', ['passwd', 'sshd']) },
  { what: 'ssh, scp and ssh-keygen (OpenSSH client)', pkg: 'openssh-client', suite: 'remote integration tests', probe: () => ['ssh', 'scp', 'ssh-keygen'].every(onPath) },
  { what: 'ps and pkill', pkg: 'procps', suite: 'remote integration and VS Code tests', probe: () => ['ps', 'pkill'].every(onPath) },
  { what: 'Chromium at /usr/bin/chromium', pkg: 'chromium', suite: 'VS Code tests', probe: () => existsSync('/usr/bin/chromium') },
  { what: 'ripgrep (rg)', pkg: 'ripgrep', suite: 'VS Code tests', probe: () => onPath('rg') },
  { what: 'a C++ toolchain (make, g++)', pkg: 'build-essential', suite: 'VS Code tests (code-server native modules)', probe: () => onPath('make') && onPath('g++') },
  { what: 'Kerberos headers (gssapi.h)', pkg: 'libkrb5-dev', suite: 'VS Code tests (code-server native modules)', probe: () => existsSync('/usr/include/gssapi/gssapi.h') },
];

function succeeds(command, args) {
  const result = spawnSync(command, args, { stdio: 'ignore', timeout: 60_000 });
  return result.status === 0;
}

function onPath(command) {
  return succeeds('sh', ['-c', `command -v ${command}`]);
}

function pythonImports(module) {
  return existsSync(PYTHON) && succeeds(PYTHON, ['-c', `import ${module}`]);
}

/**
 * What to do, from the probes' answers: nothing, install the missing packages, or stop with one line.
 * Pure, so the test can ask it about machines this one is not.
 */
function decide(missing, { isRoot, hasApt }) {
  if (missing.length === 0) return { action: 'ok' };
  const packages = [...new Set(missing.map((m) => m.pkg))];
  if (isRoot && hasApt) return { action: 'install', packages };
  const how = hasApt ? `as root: apt-get install ${packages.join(' ')}` : `Debian/Ubuntu packages: ${packages.join(' ')}`;
  const needs = missing.map((m) => `${m.what} (${m.suite})`).join('; ');
  return { action: 'stop', packages, line: `test prerequisites missing: ${needs}. Install them (${how}) and run again.` };
}

function missingRequirements() {
  return REQUIREMENTS.filter((requirement) => !requirement.probe());
}

function main(argv) {
  const checkOnly = argv.includes('--check');
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const hasApt = onPath('apt-get');
  let missing = missingRequirements();
  const decision = decide(missing, { isRoot: isRoot && !checkOnly, hasApt });
  if (decision.action === 'ok') {
    console.log(`test prerequisites: all ${REQUIREMENTS.length} present`);
    return 0;
  }
  if (decision.action === 'stop') {
    console.error(decision.line);
    return 1;
  }
  console.log(`test prerequisites: installing ${decision.packages.join(' ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update', '-q'], ['install', '-y', '-q', ...decision.packages]]) {
    const result = spawnSync('apt-get', args, { stdio: 'inherit', env });
    if (result.status !== 0) {
      console.error(`test prerequisites: apt-get ${args[0]} failed (exit ${result.status ?? result.signal}); missing: ${decision.packages.join(' ')}`);
      return 1;
    }
  }
  missing = missingRequirements();
  if (missing.length) {
    console.error(`test prerequisites: still missing after apt-get: ${missing.map((m) => m.what).join('; ')}`);
    return 1;
  }
  console.log(`test prerequisites: all ${REQUIREMENTS.length} present`);
  return 0;
}

module.exports = { REQUIREMENTS, decide };

if (require.main === module) process.exitCode = main(process.argv.slice(2));
