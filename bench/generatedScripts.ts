/**
 * Realistic long training scripts for the benchmark: whole scripts of the fixture corpus (model
 * classes with __init__ and forward, helper functions, argparse, data loading, training loops,
 * comments), one after another, each copy's top-level names renamed so that nothing collides,
 * the imports gathered at the top, padded with commented helper functions to the exact length.
 */
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';

/** Where the scripts come from: complete, valid training scripts (test/fixtures/scripts has deliberately broken ones). */
const SOURCE_DIRS = ['test/fixtures/corpus', 'examples'];

function corpusScripts(root: string): { name: string; text: string }[] {
  return SOURCE_DIRS.flatMap((dir) => {
    let files: string[];
    try {
      files = readdirSync(path.join(root, dir));
    } catch {
      return [];
    }
    return files
      .filter((file) => file.endsWith('.py'))
      .sort()
      .map((file) => ({ name: `${dir}/${file}`, text: readFileSync(path.join(root, dir, file), 'utf8').replace(/\r\n?/g, '\n') }));
  });
}

const IMPORT = /^(import\s+[\w., ]+|from\s+[\w.]+\s+import\s+[\w., *]+)$/;

/** Names a script binds at its top level: classes, functions, constants. */
function topLevelNames(lines: readonly string[]): string[] {
  const names = new Set<string>();
  for (const line of lines) {
    const match = /^(?:class|def)\s+([A-Za-z_]\w*)/.exec(line) ?? /^([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)/.exec(line);
    if (match && !match[1]!.startsWith('__')) names.add(match[1]!);
  }
  return [...names];
}

/** One copy of a script: its imports apart, its body with every top-level name suffixed. */
function renamedCopy(text: string, copy: number): { imports: string[]; body: string[] } {
  const lines = text.split('\n');
  const imports = lines.filter((line) => IMPORT.test(line));
  let body = lines.filter((line) => !IMPORT.test(line)).join('\n');
  for (const name of topLevelNames(lines)) {
    body = body.replace(new RegExp(`(?<![.\\w])${name}\\b`, 'g'), `${name}_${copy}`);
  }
  return { imports, body: body.split('\n') };
}

function helper(i: number): string[] {
  return [
    `# Helper ${i}: running statistics for the training loop.`,
    `def running_mean_${i}(values, momentum=0.9):`,
    `    """Exponential moving average of a list of floats."""`,
    `    mean = 0.0`,
    `    for value in values:`,
    `        mean = momentum * mean + (1 - momentum) * value`,
    `    return mean`,
    '',
  ];
}

/**
 * A script of exactly `lineCount` lines: whole corpus scripts while they fit (cycling through
 * the corpus, renamed per copy), then helper functions and comments up to the length.
 */
export function realisticScript(root: string, lineCount: number): string {
  const scripts = corpusScripts(root);
  if (scripts.length === 0) throw new Error(`no fixture scripts under ${root}`);
  const imports = new Set<string>();
  const body: string[] = [];
  const header = [`"""Generated benchmark script: ${lineCount.toLocaleString('en-US')} lines of training code from the fixture corpus."""`];
  for (let copy = 0; ; copy++) {
    const script = scripts[copy % scripts.length]!;
    const { imports: own, body: lines } = renamedCopy(script.text, copy);
    const section = ['', `# ---- ${script.name} (copy ${copy}) ----`, ...lines];
    const importsAfter = new Set([...imports, ...own]);
    if (header.length + importsAfter.size + body.length + section.length > lineCount) break;
    own.forEach((line) => imports.add(line));
    body.push(...section);
  }
  const out = [...header, ...[...imports].sort(), ...body];
  for (let i = 0; out.length + helper(i).length <= lineCount; i++) out.push(...helper(i));
  while (out.length < lineCount) out.push('# (padding to the benchmark length)');
  return out.join('\n');
}
