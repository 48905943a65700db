import * as assert from 'node:assert/strict';
import { hubConfigsNamedIn } from '../../../../src/core/dryRun/hubConfigs';

describe('hub configs for the dry run (hubConfigs.ts)', () => {
  it('gives the catalog config, with its model_type, of each checkpoint the script names, under the name it uses', () => {
    const configs = hubConfigsNamedIn([
      'tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")',
      "model = AutoModelForCausalLM.from_pretrained('meta-llama/Llama-2-7b-hf', torch_dtype=torch.bfloat16)",
      'parser.add_argument("--model", default="google-bert/bert-base-uncased")',
      'DEVICE = "cuda"; run_name = "my-experiment"; path = "data/train.bin"',
    ].join('\n'));
    assert.deepEqual(Object.keys(configs).sort(), ['bert-base-uncased', 'google-bert/bert-base-uncased', 'meta-llama/Llama-2-7b-hf']);
    assert.equal(configs['meta-llama/Llama-2-7b-hf']!.model_type, 'llama');
    assert.equal(configs['meta-llama/Llama-2-7b-hf']!.hidden_size, 4096);
    assert.equal(configs['bert-base-uncased']!.vocab_size, 30522);
  });

  it('gives nothing for a script that names no checkpoint the catalog knows', () => {
    assert.deepEqual(hubConfigsNamedIn('model = MyNet()\nname = "someone/private-model"\n'), {});
  });
});
