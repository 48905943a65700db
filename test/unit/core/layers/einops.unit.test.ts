import * as assert from 'node:assert/strict';
import { einopsShape } from '../../../../src/core/layers/einops';
import { LayerArgumentError } from '../../../../src/core/layers/layerArgs';
import { layerSpec } from '../../../../src/core/layers/layerSpecs';
import { LayerArgs } from '../../../../src/core/layers/layerArgs';
import { BATCH } from '../../../../src/core/layers/tensorShape';

// Shapes below are what einops 0.8 returns for the same calls on tensors of these shapes (batch 8).
describe('einops patterns', () => {
  it('splits and merges axes, inferring the one size a group leaves open', () => {
    assert.deepEqual(einopsShape('rearrange', 'b c (h p1) (w p2) -> b (h w) (p1 p2 c)', [BATCH, 3, 224, 224], { p1: 16, p2: 16 }), [BATCH, 196, 768]);
    assert.deepEqual(einopsShape('rearrange', 'b n (h d) -> b h n d', [BATCH, 197, 384], { h: 6 }), [BATCH, 6, 197, 64]);
    assert.deepEqual(einopsShape('rearrange', 'b h n d -> b n (h d)', [BATCH, 6, 197, 64], {}), [BATCH, 197, 384]);
  });

  it('carries the batch through merged axes and the ellipsis', () => {
    assert.deepEqual(einopsShape('rearrange', 'b n d -> (b n) d', [BATCH, 10, 32], {}), [{ batch: 10 }, 32]);
    assert.deepEqual(einopsShape('rearrange', '(b n) d -> b n d', [{ batch: 10 }, 32], { n: 10 }), [BATCH, 10, 32]);
    assert.deepEqual(einopsShape('rearrange', '... (h d) -> ... h d', [BATCH, 5, 64], { h: 4 }), [BATCH, 5, 4, 16]);
  });

  it('repeats to new axes, the batch among them, and reduces the axes the right side leaves out', () => {
    assert.deepEqual(einopsShape('repeat', '1 1 d -> b 1 d', [1, 1, 384], { b: BATCH }), [BATCH, 1, 384]);
    assert.deepEqual(einopsShape('repeat', 'h w -> h w c', [4, 4], { c: 3 }), [4, 4, 3]);
    assert.deepEqual(einopsShape('reduce', 'b c h w -> b c', [BATCH, 64, 7, 7], {}), [BATCH, 64]);
    assert.deepEqual(einopsShape('reduce', 'b c (h 2) (w 2) -> b c h w', [BATCH, 64, 8, 8], {}), [BATCH, 64, 4, 4]);
  });

  it('refuses what einops refuses, in plain words', () => {
    assert.throws(() => einopsShape('rearrange', 'b c h w -> b (h w) c', [BATCH, 3, 32], {}), LayerArgumentError);
    assert.throws(() => einopsShape('rearrange', 'b (h w) -> b h w', [BATCH, 64], {}), /sizes of h and w/);
    assert.throws(() => einopsShape('rearrange', 'b (h d) -> b h d', [BATCH, 30], { h: 4 }), /not divisible by 4/);
    assert.throws(() => einopsShape('repeat', 'h w -> h w c', [4, 4], {}), /axis "c"/);
    assert.throws(() => einopsShape('rearrange', 'b c', [BATCH, 3], {}), /one "->"/);
  });

  it('sizes the Rearrange and Reduce layers of einops.layers.torch, with no parameters', () => {
    const call = { type: 'Rearrange', path: '', args: ['b c (h p1) (w p2) -> b (h w) (p1 p2 c)'], kwargs: { p1: 4, p2: 4 }, range: null };
    const spec = layerSpec('Rearrange')!;
    const args = new LayerArgs(call as never);
    assert.equal(spec.params(args), 0);
    assert.deepEqual(spec.forward([[BATCH, 3, 32, 32]], args, { kwargs: {} }), [BATCH, 64, 48]);
    const reduce = new LayerArgs({ type: 'Reduce', path: '', args: ['b c h w -> b c', 'mean'], kwargs: {}, range: null } as never);
    assert.deepEqual(layerSpec('Reduce')!.forward([[BATCH, 64, 7, 7]], reduce, { kwargs: {} }), [BATCH, 64]);
  });
});
