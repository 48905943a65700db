import * as assert from 'node:assert/strict';
import { estimate } from '../../fixtures';

/** A run as timm's train.py and the scripts built on it write one: `lines` make the loader and the optimizer. */
const script = (...lines: string[]) =>
  [
    'import argparse',
    'import timm',
    'import torch',
    'from timm.data import create_dataset, create_loader, resolve_data_config',
    'from timm.optim import create_optimizer, create_optimizer_v2',
    'model = timm.create_model("resnet50", pretrained=True, num_classes=10)',
    'data_config = resolve_data_config(model=model)',
    'dataset = create_dataset("", root="data/imagenette", split="train", is_training=True)',
    ...lines,
    'model.cuda()',
    'for images, targets in loader:',
    '    loss = torch.nn.functional.cross_entropy(model(images), targets)',
    '    optimizer.zero_grad()',
    '    loss.backward()',
    '    optimizer.step()',
    '',
  ].join('\n');

const LOADER = 'loader = create_loader(dataset, input_size=data_config["input_size"], batch_size=96, is_training=True, use_prefetcher=True)';

describe("timm's training API", () => {
  it('reads the batch and the image size from create_loader, the optimizer from create_optimizer_v2', async () => {
    const [model] = (await estimate(script(LOADER, 'optimizer = create_optimizer_v2(model, opt="adamw", lr=1e-3, weight_decay=0.05)'))).models;
    assert.equal(model!.batchSize, 96);
    assert.deepEqual(model!.layerTable.inputShape, [3, 224, 224]);
    assert.equal(model!.optimizer, 'adamw');
    const origins = new Map(model!.assumptions.map((assumption) => [assumption.name, assumption.origin]));
    assert.equal(origins.get('batchSize'), 'create_loader(batch_size=...)');
    assert.equal(origins.get('optimizer'), 'create_optimizer_v2(opt="adamw")');
    assert.notEqual(model!.memory.estimateMiB, null);
  });

  it('takes the input size the loader is given, and the size by position', async () => {
    const [model] = (await estimate(script('loader = create_loader(dataset, (3, 160, 160), 32)', 'optimizer = create_optimizer_v2(model, "sgd")'))).models;
    assert.equal(model!.batchSize, 32);
    assert.deepEqual(model!.layerTable.inputShape, [3, 160, 160]);
  });

  it("gives timm's optimizers the state they hold: SGD's default momentum, none without it, two for the others", async () => {
    const kind = async (call: string) => (await estimate(script(LOADER, `optimizer = ${call}`))).models[0]!.optimizer;
    assert.equal(await kind('create_optimizer_v2(model)'), 'sgd-momentum');
    assert.equal(await kind('create_optimizer_v2(model, opt="sgd", momentum=0)'), 'sgd');
    assert.equal(await kind('create_optimizer_v2(model.parameters(), opt="lookahead_adam")'), 'adam');
    assert.equal(await kind('create_optimizer_v2(model, opt="lamb")'), 'other');
    assert.equal(await kind('timm.optim.create_optimizer_v2(model, opt="rmsproptf")'), 'rmsprop');
  });

  it("reads create_optimizer(args, model)'s args.opt from the command line's default", async () => {
    const source = script(
      'parser = argparse.ArgumentParser()',
      'parser.add_argument("--opt", default="adamw")',
      'parser.add_argument("--batch-size", type=int, default=64)',
      'args = parser.parse_args()',
      'loader = create_loader(dataset, input_size=data_config["input_size"], batch_size=args.batch_size)',
      'optimizer = create_optimizer(args, model)',
    );
    const [model] = (await estimate(source)).models;
    assert.equal(model!.optimizer, 'adamw');
    assert.equal(model!.batchSize, 64);
  });
});
