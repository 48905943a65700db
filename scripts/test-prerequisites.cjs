#!/usr/bin/env node
/**
 * The system packages `npm run test:all` needs beyond Node, checked before any test starts, so a
 * fresh machine either gets them (root with apt-get: installed here) or stops at once with one
 * line naming what is missing, instead of failing deep inside a suite or leaving tests pending.
 *
 *   node scripts/test-prerequisites.cjs          check, and install with apt-get when root
 *   node scripts/test-prerequisites.cjs --check  check only (exit 1 and one line when something is missing)
 *   node scripts/test-prerequisites.cjs --for vscode   only what one suite needs (python, remote, vscode, slurm)
 *
 * CommonJS, no dependencies and no build step: it runs before `npm run build`.
 */
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync } = require('node:fs');

/** Debian's Python with torch: the harness tests and the remote integration tests run with it. */
const PYTHON = '/usr/bin/python3';

/**
 * What the tests need, each with the Debian package that provides it, the suites that need it
 * (`--for SUITE` checks only theirs) and how those suites are named to people. A probe answers
 * true when the thing is there.
 */
const SUITES = { python: 'Python tests', remote: 'remote integration tests', vscode: 'VS Code tests', slurm: 'SLURM integration tests' };
const REQUIREMENTS = [
  { what: 'Python 3 at /usr/bin/python3', pkg: 'python3', for: ['python', 'remote', 'vscode'], probe: () => existsSync(PYTHON) },
  { what: 'PyTorch for /usr/bin/python3', pkg: 'python3-torch', for: ['python', 'remote'], probe: () => pythonImports('torch') },
  { what: 'torchvision for /usr/bin/python3', pkg: 'python3-torchvision', for: ['python'], probe: () => pythonImports('torchvision') },
  { what: 'NumPy for /usr/bin/python3', pkg: 'python3-numpy', for: ['python'], probe: () => pythonImports('numpy') },
  { what: 'PyYAML for /usr/bin/python3', pkg: 'python3-yaml', for: ['python'], probe: () => pythonImports('yaml') },
  { what: 'pytest for /usr/bin/python3', pkg: 'python3-pytest', for: ['python'], probe: () => pythonImports('pytest') },
  // scripts/catalog/timm-venv.cjs makes the timm venv the catalog's --check test runs in.
  { what: 'venv and ensurepip for /usr/bin/python3', pkg: 'python3-venv', for: ['python'], probe: () => pythonImports('ensurepip') },
  { what: 'sshd (OpenSSH server) and its privilege-separation user', pkg: 'openssh-server', for: ['remote'], probe: () => existsSync('/usr/sbin/sshd') && succeeds('getent', ['passwd', 'sshd']) },
  { what: 'ssh, scp and ssh-keygen (OpenSSH client)', pkg: 'openssh-client', for: ['remote'], probe: () => ['ssh', 'scp', 'ssh-keygen'].every(onPath) },
  { what: 'slurmctld (SLURM controller)', pkg: 'slurmctld', for: ['slurm'], probe: () => existsSync('/usr/sbin/slurmctld') },
  { what: 'slurmd (SLURM node daemon)', pkg: 'slurmd', for: ['slurm'], probe: () => existsSync('/usr/sbin/slurmd') },
  { what: 'sbatch and scontrol (SLURM client)', pkg: 'slurm-client', for: ['slurm'], probe: () => ['sbatch', 'scontrol', 'sinfo'].every(onPath) },
  { what: 'munged (MUNGE, SLURM\'s authentication)', pkg: 'munge', for: ['slurm'], probe: () => existsSync('/usr/sbin/munged') },
  { what: 'ps', pkg: 'procps', for: ['vscode'], probe: () => onPath('ps') },
  // CHROMIUM: test/e2e/run.sh takes another browser from it.
  { what: 'Chromium', pkg: 'chromium', for: ['vscode'], probe: () => onPath(process.env.CHROMIUM || '/usr/bin/chromium') },
  { what: 'ripgrep (rg)', pkg: 'ripgrep', for: ['vscode'], probe: () => onPath('rg') },
  { what: 'a C++ toolchain (make, g++) for code-server\'s native modules', pkg: 'build-essential', for: ['vscode'], probe: () => onPath('make') && onPath('g++') },
  { what: 'Kerberos headers (gssapi.h) for code-server\'s native modules', pkg: 'libkrb5-dev', for: ['vscode'], probe: () => existsSync('/usr/include/gssapi/gssapi.h') },
].map((requirement) => ({ ...requirement, suite: requirement.for.map((key) => SUITES[key]).join(', ') }));

function succeeds(command, args) {
  const result = spawnSync(command, args, { stdio: 'ignore', timeout: 60_000 });
  return result.status === 0;
}

function onPath(command) {
  return succeeds('sh', ['-c', 'command -v "$1"', 'sh', command]);
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

function requirementsFor(suite) {
  return REQUIREMENTS.filter((requirement) => suite === undefined || requirement.for.includes(suite));
}

function main(argv) {
  const checkOnly = argv.includes('--check');
  const suite = argv.includes('--for') ? argv[argv.indexOf('--for') + 1] : undefined;
  if (suite !== undefined && !(suite in SUITES)) {
    console.error(`test prerequisites: --for takes one of ${Object.keys(SUITES).join(', ')}`);
    return 2;
  }
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const hasApt = onPath('apt-get');
  const checked = requirementsFor(suite);
  let missing = checked.filter((requirement) => !requirement.probe());
  const decision = decide(missing, { isRoot: isRoot && !checkOnly, hasApt });
  if (decision.action === 'ok') {
    console.log(`test prerequisites: all ${checked.length} present`);
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
  missing = checked.filter((requirement) => !requirement.probe());
  if (missing.length) {
    console.error(`test prerequisites: still missing after apt-get: ${missing.map((m) => m.what).join('; ')}`);
    return 1;
  }
  console.log(`test prerequisites: all ${checked.length} present`);
  return 0;
}

module.exports = { REQUIREMENTS, decide };

if (require.main === module) process.exitCode = main(process.argv.slice(2));
