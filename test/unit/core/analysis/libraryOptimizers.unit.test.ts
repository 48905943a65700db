import * as assert from 'node:assert/strict';
import { setupOf } from '../../fixtures';

/** A model and the optimizer `construct` makes, after `imports`. */
const script = (imports: string, construct: string) =>
  ['import torch', imports, 'model = torch.nn.Linear(512, 512)', `optimizer = ${construct}`, 'for x in [torch.randn(8, 512)]:', '    model(x).sum().backward()', '    optimizer.step()'].join('\n');

describe('libraryOptimizers', () => {
  it("reads the optimizers scripts build from bitsandbytes, torchao, transformers, lion-pytorch, DeepSpeed and GaLore-torch by their class names", async () => {
    const cases: Array<[string, string, string]> = [
      ['import bitsandbytes as bnb', 'bnb.optim.AdamW8bit(model.parameters(), lr=1e-4)', 'AdamW8bit'],
      ['from bitsandbytes.optim import PagedLion8bit', 'PagedLion8bit(model.parameters())', 'PagedLion8bit'],
      ['import bitsandbytes as bnb', 'bnb.optim.PagedAdamW32bit(model.parameters())', 'PagedAdamW32bit'],
      ['from torchao.optim import AdamW4bit', 'AdamW4bit(model.parameters())', 'AdamW4bit'],
      ['from torchao.prototype.low_bit_optim import AdamW8bit', 'AdamW8bit(model.parameters())', 'AdamW8bit'],
      ['from transformers import Adafactor', 'Adafactor(model.parameters(), scale_parameter=False, relative_step=False, lr=1e-3)', 'Adafactor'],
      ['from transformers.optimization import Adafactor', 'Adafactor(model.parameters())', 'Adafactor'],
      ['from lion_pytorch import Lion', 'Lion(model.parameters(), lr=1e-4)', 'Lion'],
      ['from deepspeed.ops.adam import FusedAdam', 'FusedAdam(model.parameters())', 'FusedAdam'],
      ['from galore_torch import GaLoreAdamW', 'GaLoreAdamW(model.parameters())', 'GaLoreAdamW'],
    ];
    for (const [imports, construct, name] of cases) {
      const setup = await setupOf(script(imports, construct));
      assert.equal(setup.optimizerName?.value, name, construct);
      assert.equal(setup.optimizer?.value, 'other', construct);
      assert.equal(setup.optimizer?.range.startLine, 3, construct);
    }
  });

  it("leaves torch.optim's own to their kinds, and a class of the same name elsewhere unread", async () => {
    const torch = await setupOf(script('', 'torch.optim.AdamW(model.parameters())'));
    assert.equal(torch.optimizer?.value, 'adamw');
    assert.equal(torch.optimizerName, undefined);
    const other = await setupOf(script('from mylib import AdamW8bit', 'AdamW8bit(model.parameters())'));
    assert.equal(other.optimizerName, undefined);
  });
});
