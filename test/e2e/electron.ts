// Runs the e2e suites (test/e2e/suite) in a desktop VS Code downloaded by
// @vscode/test-electron. Needs internet access, so it cannot run on the offline machines,
// where test/e2e/run.sh runs the same suites in code-server instead.
//
//   npm run build && npm run compile-tests && node out/test/e2e/electron.js
//   VSCODE_VERSION=1.100.3 node out/test/e2e/electron.js   # default: stable
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runTests } from '@vscode/test-electron';
import { RESULT_FILE_ENV } from './exthost';

async function main(): Promise<void> {
  const repo = path.resolve(__dirname, '..', '..', '..');  // out/test/e2e -> repo root
  const outDir = path.join(repo, '.e2e', 'electron');
  fs.mkdirSync(outDir, { recursive: true });
  // Tests never modify the repo's fixtures: they get a fresh copy.
  const run = fs.mkdtempSync(path.join(os.tmpdir(), 'gpu-estimator-e2e-'));
  const workspace = path.join(run, 'workspace');
  fs.cpSync(path.join(repo, 'test', 'fixtures', 'workspace'), workspace, { recursive: true });
  try {
    await runTests({
      version: process.env.VSCODE_VERSION ?? 'stable',
      cachePath: path.join(repo, '.e2e', 'vscode-test'),  // .e2e/ is gitignored
      extensionDevelopmentPath: repo,
      extensionTestsPath: path.join(__dirname, 'exthost', 'index.js'),
      extensionTestsEnv: { [RESULT_FILE_ENV]: path.join(outDir, 'exthost-result.json') },
      launchArgs: [
        workspace,
        '--user-data-dir', path.join(run, 'user-data'),
        '--extensions-dir', path.join(run, 'extensions'),
        '--disable-extensions',  // other extensions only; the development one still loads
        '--disable-workspace-trust',
        '--skip-welcome',
        '--skip-release-notes',
      ],
    });
  } finally {
    fs.rmSync(run, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error('e2e tests (test-electron) failed:', err instanceof Error ? err.message : err);
  process.exit(1);
});
