import * as assert from 'node:assert/strict';
import { isConfigMap, MAX_CONFIG_BYTES, readConfigText, type ConfigNode } from '../../../../../src/core/analysis/config/configText';

/** The plain data of a read file, without lines. */
function plainOf(node: ConfigNode | undefined): unknown {
  if (!node) return undefined;
  if (isConfigMap(node.value)) return Object.fromEntries([...node.value].map(([key, child]) => [key, plainOf(child)]));
  if (Array.isArray(node.value)) return (node.value as readonly ConfigNode[]).map(plainOf);
  return node.value;
}

/** The line of a dotted key. */
function lineOf(node: ConfigNode | undefined, path: string): number | undefined {
  let current = node;
  for (const part of path.split('.')) current = current && isConfigMap(current.value) ? current.value.get(part) : undefined;
  return current?.line;
}

describe('readConfigText', () => {
  describe('YAML', () => {
    const HYDRA = `# @package _global_
defaults:
  - model: resnet
  - optimizer: adamw
  - _self_

seed: 42
data:
  root: "/datasets/imagenet"   # quoted, with a comment
  batch_size: 256
  image_size: 224
  mean: [0.485, 0.456, 0.406]
model:
  name: 'resnet50'
  drop_rate: 0.1
  widths:
  - 64
  - 128
  head: {hidden: 512, dropout: 0.5}
trainer:
  precision: bf16-mixed
  max_epochs: 90
  compile: false
  resume: null
  lr: 3e-4
  steps: 1_000
`;

    it('reads block mappings, sequences, flow collections and scalars as PyYAML would', () => {
      const { root, problems } = readConfigText(HYDRA, 'yaml');
      assert.deepEqual(problems, []);
      assert.deepEqual(plainOf(root), {
        defaults: [{ model: 'resnet' }, { optimizer: 'adamw' }, '_self_'],
        seed: 42,
        data: { root: '/datasets/imagenet', batch_size: 256, image_size: 224, mean: [0.485, 0.456, 0.406] },
        model: { name: 'resnet50', drop_rate: 0.1, widths: [64, 128], head: { hidden: 512, dropout: 0.5 } },
        trainer: { precision: 'bf16-mixed', max_epochs: 90, compile: false, resume: null, lr: 0.0003, steps: 1000 },
      });
    });

    it('gives every key its 1-based line', () => {
      const { root } = readConfigText(HYDRA, 'yaml');
      assert.equal(lineOf(root, 'seed'), 7);
      assert.equal(lineOf(root, 'data.batch_size'), 10);
      assert.equal(lineOf(root, 'model.head'), 19);
      assert.equal(lineOf(root, 'trainer.steps'), 26);
    });

    it('names what it does not read and reads the rest', () => {
      const { root, problems } = readConfigText('base: &base\n  width: 64\nother: *base\nnotes: |\n  text\n  more: text\nbatch_size: 32\n', 'yaml');
      assert.deepEqual(problems, ['line 3: YAML aliases and tags are not read', 'line 4: block scalars (| and >) are not read']);
      assert.deepEqual(plainOf(root), { base: { width: 64 }, other: null, notes: null, batch_size: 32 });
    });

    it('stops at indentation that does not fit, saying where', () => {
      const { root, problems } = readConfigText('a:\n    b: 1\n  c: 2\nd: 3\n', 'yaml');
      assert.deepEqual(plainOf(root), { a: { b: 1 } });
      assert.deepEqual(problems, ['line 3: indentation that does not match the lines above; the rest of the file is not read']);
    });

    it('an empty file is an empty mapping', () => {
      assert.deepEqual(plainOf(readConfigText('# nothing\n---\n', 'yaml').root), {});
    });
  });

  describe('JSON', () => {
    it('reads nested objects with the line of every key', () => {
      const { root, problems } = readConfigText('{\n  "model": {\n    "layers": [2, 2, 2],\n    "width": 64\n  },\n  "lr": 1e-3, "amp": true, "tag": "a\\"b"\n}\n', 'json');
      assert.deepEqual(problems, []);
      assert.deepEqual(plainOf(root), { model: { layers: [2, 2, 2], width: 64 }, lr: 0.001, amp: true, tag: 'a"b' });
      assert.equal(lineOf(root, 'model.width'), 4);
      assert.equal(lineOf(root, 'amp'), 6);
    });

    it('says where invalid JSON goes wrong, without throwing', () => {
      assert.deepEqual(readConfigText('{\n  "a": 1,\n  "b": \n}', 'json'), { problems: ['not valid JSON (line 4: unexpected `}`)'] });
      assert.deepEqual(readConfigText('[1, 2', 'json'), { problems: ['not valid JSON (line 1: expected `,` or `]`)'] });
      assert.deepEqual(readConfigText('"x"\n{}', 'json'), { problems: ['not valid JSON (line 2: more text after the value)'] });
    });

    it('bounds nesting', () => {
      const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
      assert.match(readConfigText(deep, 'json').problems[0]!, /nesting deeper than 64/);
    });
  });

  describe('TOML', () => {
    it('reads tables, dotted keys and single-line arrays', () => {
      const { root, problems } = readConfigText('title = "run"\n[model]\nwidth = 1_024\nblocks = [2, 2, 6, 2]\n[train.optim]\nlr = 3e-4\nname = \'adamw\'\namp = true\n', 'toml');
      assert.deepEqual(problems, []);
      assert.deepEqual(plainOf(root), { title: 'run', model: { width: 1024, blocks: [2, 2, 6, 2] }, train: { optim: { lr: 0.0003, name: 'adamw', amp: true } } });
      assert.equal(lineOf(root, 'train.optim.lr'), 6);
    });

    it('names lines it does not read', () => {
      const { problems } = readConfigText('[[runs]]\nx = 1\nbad line\nm = """\n', 'toml');
      assert.deepEqual(problems, ['line 1: arrays of tables ([[...]]) are not read', 'line 3: not a `key = value` line', 'line 4: a value that is not read: """']);
    });
  });

  it('does not read a file past its size limit', () => {
    const text = `a: 1\n${'#'.repeat(MAX_CONFIG_BYTES)}`;
    for (const format of ['yaml', 'json', 'toml'] as const) assert.deepEqual(readConfigText(text, format), { problems: ['the file is larger than 256 KiB; it is not read'] });
  });
});
