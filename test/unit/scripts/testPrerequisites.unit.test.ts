import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { REPO_ROOT } from '../fixtures';

interface Requirement {
  readonly what: string;
  readonly pkg: string;
  readonly suite: string;
}
type Decision = { action: 'ok' } | { action: 'install'; packages: string[] } | { action: 'stop'; packages: string[]; line: string };

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'test-prerequisites.cjs');
// A CommonJS script with no build step (it runs before `npm run build`), so it is required, not imported.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const prerequisites = require(SCRIPT) as { REQUIREMENTS: readonly Requirement[]; decide(this: void, missing: readonly Requirement[], machine: { isRoot: boolean; hasApt: boolean }): Decision };

describe('scripts/test-prerequisites.cjs (what `npm run test:all` needs beyond Node)', () => {
  const { REQUIREMENTS, decide } = prerequisites;
  const byPackage = (...pkgs: string[]): Requirement[] => REQUIREMENTS.filter((r) => pkgs.includes(r.pkg));

  it('names a Debian package for everything the Python, remote and VS Code suites need', () => {
    const packages = new Set(REQUIREMENTS.map((r) => r.pkg));
    for (const pkg of ['python3-torch', 'python3-pytest', 'python3-yaml', 'python3-numpy', 'openssh-server', 'openssh-client', 'chromium', 'libkrb5-dev']) {
      assert.ok(packages.has(pkg), pkg);
    }
  });

  it('on a Node-only machine without root: stops with one line that names each missing thing, its suite and the apt-get line', () => {
    const missing = byPackage('python3-pytest', 'openssh-server');
    const decision = decide(missing, { isRoot: false, hasApt: true });
    assert.equal(decision.action, 'stop');
    if (decision.action !== 'stop') return;
    assert.doesNotMatch(decision.line, /\n/);
    assert.match(decision.line, /pytest for \/usr\/bin\/python3 \(Python tests\)/);
    assert.match(decision.line, /sshd .*\(remote integration tests\)/);
    assert.match(decision.line, /as root: apt-get install python3-pytest openssh-server/);
  });

  it('as root with apt-get: installs each missing package once', () => {
    assert.deepEqual(decide(byPackage('python3-pytest', 'openssh-server'), { isRoot: true, hasApt: true }), { action: 'install', packages: ['python3-pytest', 'openssh-server'] });
  });

  it('without apt-get: names the packages without promising a command', () => {
    const decision = decide(byPackage('chromium'), { isRoot: true, hasApt: false });
    assert.equal(decision.action, 'stop');
    if (decision.action === 'stop') assert.match(decision.line, /Debian\/Ubuntu packages: chromium/);
  });

  it('checks only one suite\'s needs with --for, and refuses a suite it does not know', () => {
    const vscode = spawnSync(process.execPath, [SCRIPT, '--for', 'vscode', '--check'], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(vscode.status, 0, vscode.stderr);
    const checked = Number(/^test prerequisites: all (\d+) present$/m.exec(vscode.stdout)?.[1]);
    assert.equal(checked, REQUIREMENTS.filter((r) => r.suite.includes('VS Code tests')).length);
    assert.ok(checked < REQUIREMENTS.length);
    const unknown = spawnSync(process.execPath, [SCRIPT, '--for', 'gpu', '--check'], { encoding: 'utf8' });
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /--for takes one of python, remote, vscode/);
  });

  it('passes on this machine, where `npm run test:all` has set everything up (the check alone, installing nothing)', () => {
    const result = spawnSync(process.execPath, [SCRIPT, '--check'], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^test prerequisites: all \d+ present$/m);
  });
});
