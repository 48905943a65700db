/** BART in the catalog: decoder lengths, tied embeddings, the decoder's cross-attention shapes. */
import * as assert from 'node:assert/strict';
import { CatalogInputError, isCatalogMiss, type CatalogArchitecture } from '../../../../../../src/core/catalog/catalog';
import { transformersArchitecture, type TransformersRequest } from '../../../../../../src/core/catalog/hf/transformers';

function arch(request: TransformersRequest): CatalogArchitecture {
  const result = transformersArchitecture(request);
  if (isCatalogMiss(result)) assert.fail(result.miss);
  return result;
}

describe('transformers catalog: BART', () => {
  it('runs the decoder on decoderLength tokens, its cross-attention keys on the encoder\'s', () => {
    const model = arch({ className: 'AutoModelForSeq2SeqLM', checkpoint: 'facebook/bart-base', decoderLength: 64 });
    assert.equal(model.className, 'BartForConditionalGeneration');
    const rows = model.table([512]).rows;
    const row = (path: string) => rows.find((r) => r.path === path)!;
    assert.deepEqual(row('model.decoder.layers.0.encoder_attn.q_proj').outputShape, [64, 768]);
    assert.deepEqual(row('model.decoder.layers.0.encoder_attn.k_proj').outputShape, [512, 768]);
    assert.deepEqual(row('lm_head').outputShape, [64, 50265]);
    assert.throws(() => model.table([1025]), CatalogInputError);
    const long = arch({ className: 'BartForConditionalGeneration', checkpoint: 'facebook/bart-base', decoderLength: 2000 });
    assert.throws(() => long.table([128]), /at most 1024 decoder tokens/);
  });

  it('counts the shared embedding once when tied, four matrices when not', () => {
    const tied = arch({ className: 'BartForConditionalGeneration', checkpoint: 'facebook/bart-base' });
    const untied = arch({ className: 'BartForConditionalGeneration', checkpoint: 'facebook/bart-base', options: { tie_word_embeddings: false } });
    assert.equal(tied.params, 139_420_416);
    assert.equal(untied.params - tied.params, 3 * 50265 * 768);
  });

  it('leaves out the sequence classifier, whose forward needs end-of-sequence tokens', () => {
    const miss = transformersArchitecture({ className: 'AutoModelForSequenceClassification', checkpoint: 'facebook/bart-large' });
    assert.ok(isCatalogMiss(miss) && /BartForSequenceClassification .* end-of-sequence/.test(miss.miss));
  });
});
