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

  it("gives each component of a Stable Diffusion pipeline under `repo/subfolder`, as the script loads it (its old name too)", () => {
    const configs = hubConfigsNamedIn('parser.add_argument("--pretrained_model_name_or_path", default="runwayml/stable-diffusion-v1-5")\n');
    assert.deepEqual(Object.keys(configs).sort(), ['model_index.json', 'scheduler', 'text_encoder', 'tokenizer', 'unet', 'vae'].map((s) => `runwayml/stable-diffusion-v1-5/${s}`));
    // What the repository's model_index.json says, for a script that loads the whole pipeline.
    assert.deepEqual(configs['runwayml/stable-diffusion-v1-5/model_index.json'], {
      _class_name: 'StableDiffusionPipeline',
      unet: ['diffusers', 'UNet2DConditionModel'],
      vae: ['diffusers', 'AutoencoderKL'],
      text_encoder: ['transformers', 'CLIPTextModel'],
      tokenizer: ['transformers', 'CLIPTokenizer'],
      scheduler: ['diffusers', 'PNDMScheduler'],
    });
    assert.deepEqual(configs['runwayml/stable-diffusion-v1-5/unet']!.block_out_channels, [320, 640, 1280, 1280]);
    assert.equal(configs['runwayml/stable-diffusion-v1-5/text_encoder']!.model_type, 'clip_text_model');
    assert.equal(configs['runwayml/stable-diffusion-v1-5/tokenizer']!.model_max_length, 77);
    // SDXL: two text encoders and two tokenizers.
    assert.ok('stabilityai/stable-diffusion-xl-base-1.0/text_encoder_2' in hubConfigsNamedIn('"stabilityai/stable-diffusion-xl-base-1.0"'));
  });

  it("takes the ids the script's command line and the assumed values give, not only the quoted ones", () => {
    const configs = hubConfigsNamedIn('parser.add_argument("--pretrained_model_name_or_path", required=True)', ['--pretrained_model_name_or_path', 'stabilityai/stable-diffusion-2-1', '--resolution', 768, 'bert-base-uncased']);
    assert.ok('stabilityai/stable-diffusion-2-1/unet' in configs);
    assert.equal(configs['bert-base-uncased']!.model_type, 'bert');
    assert.equal(Object.keys(configs).filter((k) => k.includes('resolution')).length, 0);
  });

  it('gives nothing for a script that names no checkpoint the catalog knows', () => {
    assert.deepEqual(hubConfigsNamedIn('model = MyNet()\nname = "someone/private-model"\n'), {});
  });
});
