import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { ESLint } from 'eslint';
import { REPO_ROOT } from './fixtures';

/**
 * The repository's own ESLint config (eslint.config.mjs) on snippets given the path of a file in
 * src/ (the report view's small project, so the type information loads quickly).
 */
async function lint(code: string): Promise<{ ruleId: string | null; severity: number; line: number }[]> {
  // Under CI=true typescript-eslint assumes a single run over unchanging files and keeps the first
  // program it builds, so a second snippet at the same path would be checked as the first one was.
  const eslint = new ESLint({ cwd: REPO_ROOT, overrideConfig: { languageOptions: { parserOptions: { disallowAutomaticSingleRunInference: true } } } });
  const [result] = await eslint.lintText(code, { filePath: path.join(REPO_ROOT, 'src', 'webview', 'messages.ts') });
  return result!.messages.map(({ ruleId, severity, line }) => ({ ruleId, severity, line }));
}

const save = 'async function save(): Promise<void> {}\n';

describe('lint (eslint.config.mjs)', function () {
  // Type-aware linting builds a TypeScript program first.
  this.timeout(60000);

  it('passes a promise that is awaited or handled', async () => {
    const code = `${save}export async function run(): Promise<void> {\n  await save();\n  void save().catch(() => undefined);\n}\n`;
    assert.deepEqual(await lint(code), []);
  });

  it('fails on a dropped promise', async () => {
    const code = `${save}export function run(): void {\n  save();\n}\n`;
    assert.deepEqual(await lint(code), [{ ruleId: '@typescript-eslint/no-floating-promises', severity: 2, line: 3 }]);
  });

  it('fails on an async function passed where a callback returning void is expected', async () => {
    const code = `${save}export function run(listen: (callback: () => void) => void): void {\n  listen(async () => {\n    await save();\n  });\n}\n`;
    assert.deepEqual(await lint(code), [{ ruleId: '@typescript-eslint/no-misused-promises', severity: 2, line: 3 }]);
  });
});
