import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseDryRunOutput } from '../../../../src/core/dryRun/dryRunTrace';
import { REAL_MODEL_FEATURES, realModelFeatures } from '../../../../src/core/estimators/realModelFeatures';
import type { TrainingJob } from '../../../../src/core/estimators/trainingJob';
import { dryRunLabel, dryRunRow, jobOf, LABEL_CEILING_MIB, labelledModel } from '../../../../scripts/labeller/dryRunRows';
import { labelSources } from '../../../../scripts/labeller/labelSources';
import { SAMPLE_COLUMNS } from '../../../../scripts/realModel/sampleRows';
import { estimate, REPO_ROOT } from '../../fixtures';

const MIB = 1024 * 1024;
const SOURCE = { key: 'k', model: 'labeller/test', family: 'labeller-test', group: 'test' };
const gptSource = () => readFileSync(path.join(REPO_ROOT, 'scripts', 'labeller', 'sources', 'gpt_decoder.py'), 'utf8');

/** The value, or the test fails with the reason the labeller gave instead. */
function value<T>(result: T | string): T {
  if (typeof result === 'string') assert.fail(result);
  return result;
}

/** The reason the labeller gave, or '' when it gave a value. */
const reason = (result: unknown): string => (typeof result === 'string' ? result : '');

async function gptJob(argv: readonly string[] = []): Promise<TrainingJob> {
  return value(jobOf(value(labelledModel(await estimate(gptSource(), { scriptArguments: argv })))));
}

describe('dry-run labelled rows', () => {
  it('are rows of the samples schema the fit reads: the meta columns fit.py skips, then the real-model features', () => {
    const fitPy = readFileSync(path.join(REPO_ROOT, 'scripts', 'realModel', 'fit.py'), 'utf8');
    const metaColumns = Number(/^META_COLUMNS = (\d+)/m.exec(fitPy)?.[1]);
    assert.deepEqual(SAMPLE_COLUMNS.slice(metaColumns), [...REAL_MODEL_FEATURES]);
    assert.deepEqual(SAMPLE_COLUMNS.slice(0, metaColumns), ['model', 'family', 'group', 'case', 'batch', 'measured_mib', 'weight', 'faketensor_mib', 'analytical_mib', 'horus_mib']);
  });

  it('turn a trace into its row: the replay of the trace plus the context is the label, the static job gives the features', async () => {
    const job = await gptJob(['--n-layer', '2', '--n-embd', '128', '--n-head', '4', '--block-size', '64', '--batch-size', '8']);
    assert.equal(job.batchSize, 8);
    // 3 MiB opens a 20 MiB segment (1-10 MiB requests); 18 MiB does not fit the 17 MiB left there
    // and gets a segment of its own (2 MiB rounding): 38 MiB reserved. No convolution ran, so the
    // context without cuDNN (1,440 MiB): 1,478 MiB.
    const trace = parseDryRunOutput(JSON.stringify({ ok: true, steps: 1, events: [[1, 3 * MIB, 1], [2, 18 * MIB, 2], [-1], [-2]], cudnn: false, seconds: 0.1 }));
    const label = value(dryRunLabel(SOURCE, job, trace));
    assert.equal(label.labelMiB, 1478);
    assert.deepEqual(label.features, realModelFeatures(job).vector);
    const row = dryRunRow(label);
    assert.equal(row.length, SAMPLE_COLUMNS.length);
    const named = Object.fromEntries(SAMPLE_COLUMNS.map((column, i) => [column, row[i]]));
    assert.equal(named.case, 'dry-run');
    assert.equal(named.model, 'labeller/test');
    assert.equal(named.group, 'dry-run test');
    assert.equal(named.batch, 8);
    assert.equal(named.measured_mib, 1478);
    assert.equal(named.faketensor_mib, '');
    assert.deepEqual(row.slice(SAMPLE_COLUMNS.length - REAL_MODEL_FEATURES.length), [...realModelFeatures(job).vector]);
  });

  it('give no row for a failed dry run or a label that would fill the A100', async () => {
    const job = await gptJob();
    const failed = parseDryRunOutput(JSON.stringify({ ok: false, error: "FileNotFoundError: 'data/x.pt'", events: [] }));
    assert.match(reason(dryRunLabel(SOURCE, job, failed)), /FileNotFoundError/);
    const huge = parseDryRunOutput(JSON.stringify({ ok: true, steps: 1, events: [[1, (LABEL_CEILING_MIB + 100) * MIB, 1]], seconds: 1 }));
    assert.match(reason(dryRunLabel(SOURCE, job, huge)), /would fill/);
  });

  it("take the script's one trained model; two trained models share one peak and give none", async () => {
    const gan = `
import torch
import torch.nn as nn
G = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 784)).cuda()
D = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 1)).cuda()
opt_g = torch.optim.Adam(G.parameters())
opt_d = torch.optim.Adam(D.parameters())
for step in range(100):
    fake = G(torch.randn(32, 64, device="cuda"))
    loss_d = D(fake.detach()).mean()
    opt_d.zero_grad(); loss_d.backward(); opt_d.step()
    loss_g = -D(fake).mean()
    opt_g.zero_grad(); loss_g.backward(); opt_g.step()
`;
    assert.match(reason(labelledModel(await estimate(gan))), /2 trained models/);
    assert.match(reason(labelledModel(await estimate('x = 1\n'))), /no model/);
    const job = await gptJob(['--batch-size', '4', '--block-size', '128']);
    assert.equal(job.batchSize, 4);
    assert.equal(job.optimizer, 'adamw');
    assert.ok(job.table.rows.some((row) => row.type === 'Embedding'));
  });

  it('come from sources with unique keys, scripts that exist, and every size at several batch sizes', () => {
    const sources = labelSources(REPO_ROOT);
    assert.equal(new Set(sources.map((s) => s.key)).size, sources.length);
    for (const source of sources) assert.ok(existsSync(source.script), source.script);
    const languageModels = sources.filter((s) => s.family.startsWith('labeller-') && s.family !== 'labeller-torchvision');
    const batchesPerModel = new Map<string, Set<string>>();
    for (const s of languageModels) batchesPerModel.set(s.model, (batchesPerModel.get(s.model) ?? new Set()).add(s.argv[s.argv.indexOf('--batch-size') + 1]!));
    assert.ok(batchesPerModel.size >= 12);
    for (const [model, batches] of batchesPerModel) assert.ok(batches.size >= 3, model);
  });
});

