import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { CatalogInputError, isCatalogMiss } from '../../../../../src/core/catalog/catalog';
import { timmArchitecture, timmModelNames, timmName } from '../../../../../src/core/catalog/timm/timm';
import { findPackageRoot } from '../../../../../src/core/parsing/parserAssets';
import { checkAgainstVectors, expectArchitecture, expectMiss, loadVectors, vectorNames } from '../catalogVectors';

/**
 * The timm catalog against timm 1.0.31 itself: test/vectors/catalog/timm/ holds the tables
 * harness/layer_table.py measured on the real model on the CPU (one model per timm module file of
 * the shared A100 runs, and the fixtures' models) at the default size, at a size the laws were
 * not recorded at, and with options; every row must match.
 */

/** The shared A100 runs, read in place when the machine has them (they are not in the repository). */
const SHARED_RUNS = path.join(findPackageRoot(__dirname), '..', 'shared', 'data', 'gpumemnet-a100', 'timm_faketensor.csv');

describe('timm catalog', () => {
  describe('matches the tables timm 1.0.31 gives on the CPU', () => {
    const names = vectorNames('timm');
    it('has vectors for at least 30 models (one per timm module file, cheapest first)', () => assert.ok(names.length >= 30, `${names.length} vector files`));
    for (const name of names) {
      it(name, () => {
        const vectors = loadVectors('timm', name);
        if (timmName(name) === undefined) {
          // A model the generator could not measure (its family is then not covered): a miss that says why.
          assert.match(expectMiss(timmArchitecture(name, {}), name), /measuring it with timm 1.0.31 failed/);
          return;
        }
        // Options timm itself refuses for this model (legacy_xception has no drop_path_rate): a miss,
        // or, for an img_size timm refused, notes that say timm refused sizes while it was measured.
        const refused = vectors.cases.filter((c) => (c as { refused?: string }).refused !== undefined);
        for (const c of refused) {
          const answer = timmArchitecture(name, c.options);
          if (isCatalogMiss(answer)) continue;
          assert.ok('img_size' in c.options, `${name} ${JSON.stringify(c.options)}: timm refuses it, the catalog answers`);
          assert.ok(answer.table(c.input).notes.some((note) => /timm refused some sizes/.test(note)), `${name} ${JSON.stringify(c.options)}: no note`);
        }
        // img_size on a model not built for one size: where it changes the layers, a miss that says so.
        const uncovered = vectors.cases.filter((c) => {
          if ('img_size' in c.options && !refused.includes(c)) {
            const answer = timmArchitecture(name, c.options);
            return isCatalogMiss(answer) && /does not cover/.test(answer.miss);
          }
          return false;
        });
        // An input PyTorch refuses: CatalogInputError, or a table whose notes say timm refused
        // sizes like it while the model was measured (the laws cannot tell which sizes it takes).
        const maybe = vectors.cases.filter((c) => c.error !== undefined && !refused.includes(c) && !uncovered.includes(c)).filter((c) => {
          const architecture = expectArchitecture(timmArchitecture(name, c.options), name);
          try {
            return architecture.table(c.input).notes.some((note) => /timm refused some sizes/.test(note));
          } catch (error) {
            assert.ok(error instanceof CatalogInputError, String(error));
            return true;
          }
        });
        // Where the table's notes say some numbers follow no law (a gMLP's token-mixing weights
        // grow with tokens squared) or round either way at this size, the rows must still be
        // timm's rows (paths and types); their numbers are the ones the notes disclaim.
        const declared = vectors.cases.filter((c) => {
          if (c.error !== undefined || refused.includes(c) || uncovered.includes(c)) return false;
          const table = expectArchitecture(timmArchitecture(name, c.options), name).table(c.input);
          if (!table.notes.some((note) => /follow no law|round either way|not derived/.test(note))) return false;
          assert.equal(table.rows.length, c.rowCount, `${name} ${JSON.stringify(c.options)}: row count`);
          if (c.rows) assert.deepEqual(table.rows.map((r) => [r.path, r.type]), c.rows.map((r) => [r[0], r[1]]));
          return true;
        });
        checkAgainstVectors(timmArchitecture, { ...vectors, cases: vectors.cases.filter((c) => ![refused, uncovered, maybe, declared].some((set) => set.includes(c))) });
      });
    }
  });

  (existsSync(SHARED_RUNS) ? it : it.skip)('resolves every model of the shared A100 runs', () => {
    const names = new Set(
      readFileSync(SHARED_RUNS, 'utf8')
        .split('\n')
        .slice(1)
        .map((line) => line.split(',')[0]!)
        .filter((file) => file.endsWith('.out'))
        .map((file) => file.slice(0, -'.out'.length).replace(/_\d+$/, '')),
    );
    // All of them, gcvit_* included (the generator gives torch 1.13's meta device a
    // repeat_interleave with a known count while it records).
    const missing = [...names].filter((name) => timmName(name) === undefined);
    assert.deepEqual(missing, [], `${missing.length} of ${names.size} names do not resolve: ${missing.join(', ')}`);
  });

  it('knows timm names, pretrained tags, the Hub prefix and deprecated names', () => {
    // Every name timm 1.0.31's list_models() gives (1,371) builds on the CPU and is in the catalog.
    assert.ok(timmModelNames().length >= 1371, `${timmModelNames().length} names`);
    assert.deepEqual(timmName('resnet50.a1_in1k'), { model: 'resnet50', tag: 'a1_in1k' });
    assert.deepEqual(timmName('timm/resnet50.tv_in1k'), { model: 'resnet50', tag: 'tv_in1k' });
    assert.deepEqual(timmName('hf_hub:timm/convnext_tiny.fb_in1k'), { model: 'convnext_tiny', tag: 'fb_in1k' });
    assert.equal(timmName('xception')?.model, 'legacy_xception');
    assert.equal(expectArchitecture(timmArchitecture('xception', {}), 'xception').params, 22855952);
  });

  it("builds a tag's own head and input size, as create_model does", () => {
    const in21k = expectArchitecture(timmArchitecture('vit_base_patch16_224.augreg_in21k', { pretrained: true }), 'in21k');
    assert.equal(in21k.params, 86567656 + 768 * 20843 + 20843);
    const ten = expectArchitecture(timmArchitecture('vit_base_patch16_224.augreg_in21k', { pretrained: true, num_classes: 10 }), 'in21k 10');
    assert.equal(ten.params, 86567656 - 769 * 990);
    assert.match(expectMiss(timmArchitecture('resnet50.no_such_tag', {}), 'tag'), /no pretrained tag "no_such_tag"/);
  });

  it('follows img_size for a ViT built for one size, and refuses other sizes without it', () => {
    const vit = expectArchitecture(timmArchitecture('vit_base_patch16_224', { img_size: 384 }), 'vit 384');
    assert.equal(vit.params, 86567656 + 768 * (576 - 196));
    assert.deepEqual(vit.input.defaultShape, [3, 384, 384]);
    assert.deepEqual(vit.table([3, 384, 384]).rows.find((r) => r.path === 'patch_embed.proj')!.outputShape, [768, 24, 24]);
    const plain = expectArchitecture(timmArchitecture('vit_base_patch16_224', {}), 'vit');
    assert.throws(() => plain.table([3, 384, 384]), CatalogInputError);
  });

  it("follows in_chans where a layer's output is a multiple of it (TNT's pixel unfold: in_chans x 16 x 16)", () => {
    const tnt = expectArchitecture(timmArchitecture('tnt_s_patch16_224', { in_chans: 1 }), 'tnt in_chans=1');
    assert.deepEqual(tnt.table([1, 224, 224]).rows.find((r) => r.path === 'pixel_embed.unfold')!.outputShape, [256, 196]);
    const rgb = expectArchitecture(timmArchitecture('tnt_s_patch16_224', {}), 'tnt');
    assert.deepEqual(rgb.table([3, 224, 224]).rows.find((r) => r.path === 'pixel_embed.unfold')!.outputShape, [768, 196]);
  });

  it('gives a features_only backbone its feature maps as output', () => {
    const backbone = expectArchitecture(timmArchitecture('resnet50', { features_only: true, pretrained: true }), 'features');
    assert.equal(backbone.className, 'FeatureListNet');
    const table = backbone.table([3, 256, 256]);
    assert.deepEqual(table.output, [64, 128, 128]);
    assert.ok(!table.rows.some((r) => r.path === 'fc'));
  });

  it('says where a size is one timm refused or the laws do not cover', () => {
    const levit = expectArchitecture(timmArchitecture('levit_128s', { img_size: 256 }), 'levit');
    const notes = levit.table([3, 256, 256]).notes;
    assert.ok(notes.some((note) => /timm refused some sizes/.test(note)), notes.join(' | '));
    assert.ok(notes.some((note) => /follow no law over the measured sizes; they keep their 224x224 value/.test(note)), notes.join(' | '));
    assert.deepEqual(levit.table([3, 256, 256]).output, [1000]);
    assert.deepEqual(expectArchitecture(timmArchitecture('levit_128s', {}), 'levit 224').table([3, 224, 224]).notes, []);
  });

  it('misses what it does not cover, saying why', () => {
    assert.match(expectMiss(timmArchitecture('resnet50', { global_pool: 'token' }), 'token pool'), /timm refuses global_pool='token'/);
    assert.match(expectMiss(timmArchitecture('resnet50', { block_args: 1 }), 'unknown option'), /does not know the option `block_args`/);
    assert.match(expectMiss(timmArchitecture('resnet51', {}), 'unknown name'), /no model "resnet51"; did you mean .*resnet50/);
    assert.match(expectMiss(timmArchitecture('resnet50', { img_size: 256 }), 'img_size on a CNN'), /takes no img_size/);
    // CrossVit takes img_size, and the model timm builds with it fails (timm 1.0.31): a miss with timm's error.
    const crossvit = expectMiss(timmArchitecture('crossvit_tiny_240', { img_size: 192 }), 'CrossVit img_size');
    assert.match(crossvit, /builds CrossVit with img_size, but the model it built failed .*img_size=272 on a 240x240 input: RuntimeError: The size of tensor a/);
  });
});
