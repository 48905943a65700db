import * as assert from 'node:assert/strict';
import { humanOutput } from '../../../../src/cli/humanOutput';
import { codeLensTitle, statusTooltipMarkdown } from '../../../../src/core/display/editorText';
import { hoverText } from '../../../../src/core/display/hoverText';
import { chartData, estimatorComparison, markdownSummary } from '../../../../src/core/display/reportData';
import type { Estimator } from '../../../../src/core/estimate/estimator';
import { estimateJson } from '../../../../src/core/estimate/estimateJson';
import { ESTIMATORS } from '../../../../src/core/estimate/estimators';
import { outlookOf } from '../../../../src/core/estimate/outlook';
import { estimate } from '../../fixtures';

const SCRIPT = 'import torch\nimport torch.nn as nn\nmodel = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 10))\nx = torch.randn(64, 256)\nloss = model(x).sum()\n';

/** A made-up comparison estimator: twice the parameters' bytes, plus 1000 MiB. */
const doubled: Estimator<undefined> = {
  id: 'doubled',
  label: 'Doubled weights',
  short: 'doubled',
  attribution: () => 'doubled weights',
  footnote: 'doubled: a test estimator.',
  jsonKey: 'doubledMiB',
  pass: 'analysis',
  estimate: ({ job }) => ({ method: 'doubled', pointMiB: 1000 + (8 * job.table.totals.params) / 2 ** 20, range: null, warnings: [], detail: undefined }),
};

/** A made-up estimator that outranks nothing: the estimate rule (estimators.ts) does not list it. */
describe('a new estimator: one file and one line in the registry, shown on every surface', () => {
  before(() => (ESTIMATORS as Estimator[]).push(doubled));
  after(() => (ESTIMATORS as Estimator[]).pop());

  it('is run, read and shown by the CLI table and JSON, the hover, the CodeLens, the status tooltip and the report', async () => {
    const file = await estimate(SCRIPT);
    const model = file.models[0]!;
    const reading = model.estimates.find((r) => r.estimator === 'doubled');
    assert.ok(reading, JSON.stringify(model.estimates));
    assert.equal(reading.role, 'comparison');
    assert.equal(reading.estimateMiB, 1001);
    assert.deepEqual(
      model.estimates.map((r) => [r.estimator, r.role]),
      [
        ['analytical', 'candidate'],
        ['horus', 'comparison'],
        ['ensemble', 'candidate'],
        ['real-model', 'estimate'],
        ['doubled', 'comparison'],
      ],
    );

    const cli = humanOutput(file);
    assert.match(cli, /estimate\s+Horus\s+doubled\s+fits/);
    assert.match(cli, /estimators: .*Doubled weights 1001 MiB/);
    assert.match(cli, /^doubled: a test estimator\.$/m);
    const json = estimateJson(file).models[0]!;
    assert.equal(json.doubledMiB, 1001);
    assert.deepEqual(Object.keys(json).slice(Object.keys(json).indexOf('memory'), Object.keys(json).indexOf('utilization')), ['memory', 'horusMiB', 'realModelMiB', 'doubledMiB']);
    assert.match(hoverText(file, model), / · Doubled weights: 1001 MiB/);
    assert.match(codeLensTitle(model, file.gpu.name), / \| doubled 1001 MiB/);
    assert.match(statusTooltipMarkdown(file, model), /- Doubled weights: 1001 MiB/);
    const outlook = outlookOf(file, 0.1)[0]!;
    assert.deepEqual(
      estimatorComparison(model).find((row) => row.estimator === 'doubled'),
      { estimator: 'doubled', label: 'Doubled weights', estimateMiB: 1001, lowMiB: null, highMiB: null },
    );
    assert.ok(chartData(file, model, outlook, 'model-0').estimators?.some((row) => row.label === 'Doubled weights'));
    assert.match(markdownSummary(file, model, outlook), /\| Doubled weights \| 1001 MiB \|/);
  });

  it('is left out where it cannot run, and the surfaces say n/a or leave it out', async () => {
    const file = await estimate(SCRIPT.replace('torch.randn(64, 256)', 'torch.randn(n, 256)'));
    const model = file.models[0]!;
    assert.equal(model.batchSize, null);
    assert.equal(model.estimates.find((r) => r.estimator === 'doubled')?.estimateMiB, null);
    assert.equal(estimateJson(file).models[0]!.doubledMiB, null);
    assert.doesNotMatch(hoverText(file, model), /Doubled/);
    assert.doesNotMatch(codeLensTitle(model, file.gpu.name), /doubled/);
  });
});
