import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { ModelEstimate } from '../../../../src/core/estimate/fileEstimate';
import { estimate, REPO_ROOT } from '../../fixtures';

const framework = (name: string) => readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'frameworks', name), 'utf8');
const assumption = (model: ModelEstimate, name: string) => {
  const found = model.assumptions.find((a) => a.name === name);
  return found && `${found.value} (${found.origin}, line ${found.line})`;
};
const byName = (models: readonly ModelEstimate[], name: string) => {
  const model = models.find((m) => m.name === name);
  assert.ok(model, `no model ${name} among ${models.map((m) => m.name).join(', ')}`);
  return model;
};

describe('each model its own training set-up (modelSetup.ts)', () => {
  it('gives each model of a GAN the optimizer built from its parameters, not the file\'s first', async () => {
    const { models } = await estimate(framework('gan_separate_optimizers.py'));
    assert.equal(assumption(byName(models, 'netD'), 'optimizer'), 'sgd (SGD(...), line 63)');
    assert.equal(assumption(byName(models, 'netG'), 'optimizer'), 'adam (Adam(...), line 64)');
  });

  it("counts the state an optimizer keeps beyond its kind's: RMSprop's momentum buffer and average gradient, AMSGrad's maximum", async () => {
    const script = (optimizer: string) => `import torch\nimport torch.nn as nn\nmodel = nn.Linear(1024, 1024).cuda()\noptimizer = ${optimizer}\nx = torch.randn(8, 1024).cuda()\nmodel(x).sum().backward()\noptimizer.step()\n`;
    const cases: [string, number | undefined, string][] = [
      ['torch.optim.RMSprop(model.parameters(), lr=1e-5, weight_decay=1e-8, momentum=0.999, foreach=True)', 1, 'rmsprop (RMSprop(momentum=0.999): a momentum buffer beside its own state, line 4)'],
      ['torch.optim.RMSprop(model.parameters(), 1e-2, 0.99, 1e-8, 0, 0.9, True)', 2, 'rmsprop (RMSprop(momentum=0.9, centered=True): a momentum buffer and an average gradient beside its own state, line 4)'],
      ['torch.optim.Adam(model.parameters(), lr=1e-3, amsgrad=True)', 1, "adam (Adam(amsgrad=True): the second moment's running maximum beside its own state, line 4)"],
      ['torch.optim.RMSprop(model.parameters(), lr=1e-3)', undefined, 'rmsprop (RMSprop(...), line 4)'],
      ['torch.optim.AdamW(model.parameters(), lr=1e-3, amsgrad=False)', undefined, 'adamw (AdamW(...), line 4)'],
    ];
    const plain = (await estimate(script('torch.optim.RMSprop(model.parameters(), lr=1e-3)'))).models[0]!;
    for (const [optimizer, extra, origin] of cases) {
      const model = (await estimate(script(optimizer))).models[0]!;
      assert.equal(assumption(model, 'optimizer'), origin);
      assert.equal(model.optimizerExtraCopies, extra, optimizer);
      if (model.optimizer === 'rmsprop') {
        // One more copy of the weights (1024 x 1024 + 1024 floats: 4 MiB) per extra state in the analytical breakdown.
        const weights = model.memory.breakdown!.weightsMiB;
        assert.ok(Math.abs(model.memory.breakdown!.optimizerMiB - plain.memory.breakdown!.optimizerMiB - (extra ?? 0) * weights) < 0.01, optimizer);
      }
    }
  });

  it('follows itertools.chain(a.parameters(), b.parameters()) and the loader each training loop iterates', async () => {
    const { models } = await estimate(framework('pretrain_then_probe.py'));
    const probe = byName(models, 'probe');
    assert.equal(assumption(probe, 'optimizer'), 'sgd-momentum (SGD(...), line 43)');
    assert.equal(assumption(probe, 'batchSize'), '64 (DataLoader(batch_size=...), line 50)');
    for (const name of ['encoder', 'decoder']) {
      const model = byName(models, name);
      assert.equal(assumption(model, 'optimizer'), 'adamw (AdamW(...), line 47)', name);
      assert.equal(assumption(model, 'batchSize'), '512 (DataLoader(batch_size=...), line 52)', name);
      assert.equal(model.batchSize, 512);
    }
  });

  it('follows parameter groups built beforehand, and takes the training loader over the validation loader defined first', async () => {
    const { models } = await estimate(framework('finetune_param_groups.py'));
    const model = byName(models, 'model');
    assert.equal(assumption(model, 'optimizer'), 'sgd-momentum (SGD(...), line 50)');
    // The --batch-size option (line 36) feeds train_loader, which the loop around backward() iterates; val_loader (line 37) comes first in the file.
    assert.equal(assumption(model, 'batchSize'), '48 (DataLoader(batch_size=...), line 36)');
    // The EMA copy is given to no optimizer: it says so rather than borrowing the model's SGD.
    const ema = byName(models, 'ema');
    assert.equal(ema.optimizer, 'adam');
    assert.ok(ema.notes.some((note) => note.message.startsWith("No optimizer is given ema's parameters (SGD(...) on line 50 trains other models)")), JSON.stringify(ema.notes));
  });

  it('sees through DDP, SyncBatchNorm conversion and .module: the student is one model with its SGD, the teacher called under no_grad runs inference only', async () => {
    const { models } = await estimate(framework('ddp_distillation.py'));
    assert.deepEqual(
      models.map((m) => m.name),
      ['teacher', 'student'],
    );
    assert.equal(assumption(byName(models, 'student'), 'optimizer'), 'sgd-momentum (SGD(...), line 37)');
    const teacher = byName(models, 'teacher');
    assert.ok(teacher.notes.some((note) => /teacher: every call the script makes of it runs with autograd off/.test(note.message)), JSON.stringify(teacher.notes));
    assert.equal(assumption(teacher, 'optimizer'), 'none (inference only: every call under torch.no_grad(), line 44)');
  });

  it('sees through FSDP and torch.compile (one model each), following the optimizer through the wrapper', async () => {
    const source = [
      'import torch',
      'import torch.nn as nn',
      'from torch.distributed.fsdp import FullyShardedDataParallel as FSDP',
      'encoder = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 256))',
      'head = nn.Linear(256, 8)',
      'sharded = FSDP(encoder)',
      'fast = torch.compile(sharded)',
      'head_opt = torch.optim.SGD(head.parameters(), lr=0.1)',
      'opt = torch.optim.AdamW(fast._orig_mod.parameters(), lr=1e-4)',
      'x = torch.randn(32, 256)',
      'for step in range(100):',
      '    loss = head(fast(x)).logsumexp(-1).mean()',
      '    loss.backward()',
      '    opt.step()',
      '    head_opt.step()',
    ].join('\n');
    const { models } = await estimate(source);
    assert.deepEqual(
      models.map((m) => m.name),
      ['encoder', 'head'],
    );
    assert.equal(assumption(byName(models, 'encoder'), 'optimizer'), 'adamw (AdamW(...), line 9)');
    assert.equal(assumption(byName(models, 'head'), 'optimizer'), 'sgd (SGD(...), line 8)');
  });

  it('follows filter(...) and comprehensions over .parameters()', async () => {
    const source = [
      'import torch',
      'import torch.nn as nn',
      'backbone = nn.Sequential(nn.Linear(128, 512), nn.ReLU(), nn.Linear(512, 128))',
      'adapter = nn.Linear(128, 128)',
      'for p in backbone.parameters():',
      '    p.requires_grad = False',
      'opt_a = torch.optim.Adagrad([p for p in adapter.parameters() if p.requires_grad], lr=1e-2)',
      'opt_b = torch.optim.RMSprop(filter(lambda p: p.requires_grad, backbone.parameters()), lr=1e-4)',
      'x = torch.randn(64, 128)',
      'for step in range(10):',
      '    loss = adapter(backbone(x)).sum()',
      '    loss.backward()',
      '    opt_a.step()',
      '    opt_b.step()',
    ].join('\n');
    const { models } = await estimate(source);
    assert.equal(assumption(byName(models, 'adapter'), 'optimizer'), 'adagrad (Adagrad(...), line 7)');
    assert.equal(assumption(byName(models, 'backbone'), 'optimizer'), 'rmsprop (RMSprop(...), line 8)');
  });

  it('keeps the file\'s optimizer for a model when the optimizer\'s parameters cannot be followed', async () => {
    const source = [
      'import torch',
      'import torch.nn as nn',
      'model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2))',
      'params = get_params(model)',
      'opt = torch.optim.RMSprop(params, lr=1e-3)',
      'x = torch.randn(16, 32)',
      'for step in range(10):',
      '    opt.zero_grad()',
      '    model(x).sum().backward()',
      '    opt.step()',
    ].join('\n');
    const { models } = await estimate(source);
    assert.equal(assumption(models[0]!, 'optimizer'), 'rmsprop (RMSprop(...), line 5)');
  });

  it('reads half-typed optimizer calls without throwing', async () => {
    for (const text of ['opt = torch.optim.Adam(model.parameters(', 'opt = torch.optim.Adam(model.', 'opt = torch.optim.SGD([{"params": model.parameters(), ', 'opt = torch.optim.SGD(itertools.chain(model.parameters(), ))']) {
      const source = ['import torch', 'import torch.nn as nn', 'model = nn.Linear(8, 2)', text].join('\n');
      const result = await estimate(source);
      assert.equal(result.models.length, 1, text);
    }
  });
});
