/**
 * `npm run bench`: how long the core takes, outside VS Code. Loads the parser once (cold start),
 * then estimates each example and a generated 1,000-line training script many times and prints
 * p50/p95 latencies. Numbers, not assertions: the README records them with this command.
 */
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { estimateSource } from '../src/core/estimateSource';
import { defaultGpuProfile } from '../src/core/gpus/gpuProfiles';
import { findPackageRoot, packagedParserAssets } from '../src/core/parsing/parserAssets';
import { createPythonParser, type PythonParser } from '../src/core/parsing/pythonParser';

const ROOT = findPackageRoot(__dirname);
const RUNS = 200;

/** A long but ordinary script: a model, then many helper functions and a training loop. */
function thousandLineScript(): string {
  const lines = ['import torch', 'import torch.nn as nn', 'BATCH_SIZE = 256', 'model = nn.Sequential(', ...Array.from({ length: 40 }, (_, i) => `    nn.Linear(${512 + i}, ${513 + i}), nn.ReLU(),`), ')', 'optimizer = torch.optim.Adam(model.parameters())'];
  for (let i = 0; lines.length < 990; i++) {
    lines.push(`def helper_${i}(x, scale=${i}):`, `    y = x * scale + ${i}`, `    return torch.relu(y).mean(dim=-1)`, '');
  }
  lines.push('for step in range(100):', '    x = torch.randn(BATCH_SIZE, 512)', '    loss = model(x).sum()', '    loss.backward()', '    optimizer.step()');
  return lines.join('\n');
}

function percentiles(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return `p50 ${at(0.5).toFixed(2)} ms, p95 ${at(0.95).toFixed(2)} ms`;
}

function time(parser: PythonParser, name: string, source: string): void {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    estimateSource(name, source, parser, { gpu: defaultGpuProfile(), safetyMargin: 0.1 });
    samples.push(performance.now() - start);
  }
  console.log(`  ${name.padEnd(32)} ${String(source.split('\n').length).padStart(5)} lines  ${percentiles(samples)}`);
}

async function main(): Promise<void> {
  const start = performance.now();
  const parser = await createPythonParser(packagedParserAssets(ROOT));
  console.log(`parser load (cold): ${(performance.now() - start).toFixed(1)} ms`);
  console.log(`estimate a whole file (parse + analyse + estimate), ${RUNS} runs each:`);
  for (const file of readdirSync(path.join(ROOT, 'examples')).filter((f) => f.endsWith('.py')).sort()) {
    time(parser, `examples/${file}`, readFileSync(path.join(ROOT, 'examples', file), 'utf8'));
  }
  time(parser, 'generated 1,000-line script', thousandLineScript());
}

void main();
