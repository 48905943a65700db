/**
 * The README's CLI examples are real runs: each `$ node dist/cli.js ...` block must print exactly
 * what the block shows, and the shortened `--json` example must agree with a real run on every
 * value it shows. When an estimator changes, this fails with the new output to paste in.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from './fixtures';

const README = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');

function runCli(args: readonly string[]): string {
  const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'dist', 'cli.js'), ...args], { cwd: REPO_ROOT, encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout;
}

/** The fenced blocks of the README, with the info string after the opening fence. */
function fencedBlocks(markdown: string): { info: string; body: string }[] {
  return [...markdown.matchAll(/^```([^\n]*)\n([\s\S]*?)^```$/gm)].map((match) => ({ info: match[1]!.trim(), body: match[2]! }));
}

/**
 * Whether `shown` (from the README) agrees with `actual`: objects on every key they show except
 * "...", arrays element by element on the elements they show (a shortened array shows a prefix),
 * everything else equal. Returns the path of the first disagreement, or null.
 */
function disagreement(shown: unknown, actual: unknown, where = '$'): string | null {
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual) || actual.length < shown.length) return `${where}: README shows ${JSON.stringify(shown)}, the CLI prints ${JSON.stringify(actual)}`;
    for (const [i, item] of shown.entries()) {
      const found = disagreement(item, actual[i], `${where}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (shown !== null && typeof shown === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return `${where}: README shows an object, the CLI prints ${JSON.stringify(actual)}`;
    for (const [key, value] of Object.entries(shown)) {
      if (key === '...') continue;
      if (!(key in actual)) return `${where}.${key}: in the README, not in the CLI's output`;
      const found = disagreement(value, (actual as Record<string, unknown>)[key], `${where}.${key}`);
      if (found) return found;
    }
    return null;
  }
  return Object.is(shown, actual) ? null : `${where}: README shows ${JSON.stringify(shown)}, the CLI prints ${JSON.stringify(actual)}`;
}

describe('README examples (checked against real CLI runs)', () => {
  const commandBlocks = fencedBlocks(README).filter((block) => block.body.startsWith('$ node dist/cli.js '));
  const jsonBlocks = fencedBlocks(README).filter((block) => block.info === 'json' && /"file": "examples\//.test(block.body));

  it('has the examples this test checks', () => {
    assert.ok(commandBlocks.length >= 1, 'a `$ node dist/cli.js ...` block');
    assert.equal(jsonBlocks.length, 1, 'the shortened --json example');
  });

  for (const block of commandBlocks) {
    const [commandLine, ...shownLines] = block.body.split('\n');
    it(`prints what the README shows for \`${commandLine}\``, () => {
      const args = commandLine!.slice('$ node dist/cli.js '.length).split(/\s+/).filter(Boolean);
      const actual = runCli(args).trimEnd();
      assert.equal(shownLines.join('\n').trimEnd(), actual, `update the README block with:\n${actual}`);
    });
  }

  for (const block of jsonBlocks) {
    const shown = JSON.parse(block.body) as { file: string; gpu: { id: string } };
    it(`agrees on every value the --json example shows (${shown.file})`, () => {
      const actual: unknown = JSON.parse(runCli([shown.file, '--gpu', shown.gpu.id, '--json']));
      assert.equal(disagreement(shown, actual), null);
    });
  }

  it('the comparison catches a stale number, a missing key and a shortened array that disagrees', () => {
    assert.equal(disagreement({ a: 1, '...': '...' }, { a: 1, b: 2 }), null);
    assert.match(disagreement({ a: 1461 }, { a: 1457 }) ?? '', /^\$\.a: README shows 1461, the CLI prints 1457$/);
    assert.match(disagreement({ a: { b: 1 } }, { a: {} }) ?? '', /\$\.a\.b: in the README, not/);
    assert.equal(disagreement({ rows: [{ x: 1 }] }, { rows: [{ x: 1, y: 2 }, { x: 3 }] }), null);
    assert.match(disagreement({ rows: [{ x: 2 }] }, { rows: [{ x: 1 }] }) ?? '', /\$\.rows\[0\]\.x/);
  });
});
