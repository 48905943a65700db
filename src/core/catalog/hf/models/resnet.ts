/**
 * ResNet (transformers 5.18.0, models/resnet/modeling_resnet.py; microsoft/resnet-18 to -152). A
 * 7x7 stride-2 convolution with batch norm and the activation, a 3x3 max pool, then stages of basic
 * (two 3x3 convolutions) or bottleneck layers (1x1, 3x3, 1x1 to four times the width), each
 * convolution followed by nn.BatchNorm2d and an nn.ReLU (an nn.Identity after a layer's last), a
 * 1x1 convolution with batch norm on the shortcut where the width or the stride changes, and the
 * configured activation after the addition. The convolutions inside the layers always use ReLU
 * (`ResNetConvLayer`'s default); `hidden_act` sets the stem's and the one after each addition. The
 * model pools with nn.AdaptiveAvgPool2d to 1x1; the classifier is nn.Flatten and a Linear.
 */
import { counts, num, str, type HfConfig } from '../configs';
import type { BuiltModel, ClassSpec, ForwardInput, ModelTypeSpec } from '../modelTypeSpec';
import { activation, batchNorm2d, conv2d, linear, plain, userModule } from '../layers';
import type { Module, Trace } from '../moduleTree';

type Forward = (trace: Trace, input: ForwardInput) => void;
/** Runs a part on an input grid and returns its output grid. */
type Part = (trace: Trace, h: number, w: number) => [number, number];

const lists = (c: HfConfig): { depths: number[]; sizes: number[] } => ({ depths: counts(c, 'depths'), sizes: counts(c, 'hidden_sizes') });

/** A convolution's output side with padding kernel // 2, as ResNetConvLayer pads. */
const side = (n: number, kernel: number, stride: number): number => Math.floor((n + 2 * Math.floor(kernel / 2) - kernel) / stride) + 1;

/** `ResNetConvLayer`: a convolution without bias, nn.BatchNorm2d, and the activation (nn.Identity for none). */
function convLayer(parent: Module, name: string, inC: number, outC: number, kernel: number, stride: number, act: string | null): Part {
  const layer = parent.add(name, userModule('ResNetConvLayer'));
  const conv = layer.add('convolution', conv2d(inC, outC, [kernel, kernel], false));
  const norm = layer.add('normalization', batchNorm2d(outC));
  const fn = layer.add('activation', act === null ? plain('Identity') : activation(act));
  return (trace, h, w) => {
    const out: [number, number] = [side(h, kernel, stride), side(w, kernel, stride)];
    trace.call(conv, [outC, ...out]);
    trace.call(norm, [outC, ...out]);
    trace.call(fn, [outC, ...out]);
    return out;
  };
}

/** A basic or bottleneck layer: its convolutions, the shortcut (projected where the shape changes) and the activation after the sum. */
function residualLayer(c: HfConfig, parent: Module, name: string, inC: number, outC: number, stride: number): Part {
  const bottleneck = c.layer_type === 'bottleneck';
  const layer = parent.add(name, userModule(bottleneck ? 'ResNetBottleNeckLayer' : 'ResNetBasicLayer'));
  let shortcut: Part | undefined;
  if (inC !== outC || stride !== 1) {
    const s = layer.add('shortcut', userModule('ResNetShortCut'));
    const conv = s.add('convolution', conv2d(inC, outC, [1, 1], false));
    const norm = s.add('normalization', batchNorm2d(outC));
    shortcut = (trace, h, w) => {
      const out: [number, number] = [side(h, 1, stride), side(w, 1, stride)];
      trace.call(conv, [outC, ...out]);
      trace.call(norm, [outC, ...out]);
      return out;
    };
  } else {
    const identity = layer.add('shortcut', plain('Identity'));
    shortcut = (trace, h, w) => {
      trace.call(identity, [outC, h, w]);
      return [h, w];
    };
  }
  const seq = layer.add('layer', userModule('Sequential'));
  let convs: Part[];
  if (bottleneck) {
    const reduced = Math.floor(outC / 4);
    const inBottleneck = c.downsample_in_bottleneck === true;
    convs = [
      convLayer(seq, '0', inC, reduced, 1, inBottleneck ? stride : 1, 'relu'),
      convLayer(seq, '1', reduced, reduced, 3, inBottleneck ? 1 : stride, 'relu'),
      convLayer(seq, '2', reduced, outC, 1, 1, null),
    ];
  } else {
    convs = [convLayer(seq, '0', inC, outC, 3, stride, 'relu'), convLayer(seq, '1', outC, outC, 3, 1, null)];
  }
  const act = layer.add('activation', activation(str(c, 'hidden_act')));
  return (trace, h, w) => {
    let grid: [number, number] = [h, w];
    for (const run of convs) grid = run(trace, ...grid);
    shortcut(trace, h, w);
    trace.call(act, [outC, ...grid]);
    return grid;
  };
}

function base(c: HfConfig): [Module, Forward, number] {
  const { depths, sizes } = lists(c);
  const root = userModule('ResNetModel');
  const emb = root.add('embedder', userModule('ResNetEmbeddings'));
  const embedding = num(c, 'embedding_size');
  const stem = convLayer(emb, 'embedder', num(c, 'num_channels'), embedding, 7, 2, str(c, 'hidden_act'));
  const maxPool = emb.add('pooler', plain('MaxPool2d'));
  const stages = root.add('encoder', userModule('ResNetEncoder')).add('stages', userModule('ModuleList'));
  const parts: Part[] = [];
  depths.forEach((depth, s) => {
    const stage = stages.add(String(s), userModule('ResNetStage'));
    const layers = stage.add('layers', userModule('Sequential'));
    const inC = s === 0 ? embedding : sizes[s - 1]!;
    const stride = s === 0 ? (c.downsample_in_first_stage === true ? 2 : 1) : 2;
    parts.push(residualLayer(c, layers, '0', inC, sizes[s]!, stride));
    for (let j = 1; j < depth; j++) parts.push(residualLayer(c, layers, String(j), sizes[s]!, sizes[s]!, 1));
  });
  const last = sizes[sizes.length - 1]!;
  const pool = root.add('pooler', plain('AdaptiveAvgPool2d'));
  return [
    root,
    (trace, input) => {
      const [, height, width] = input.image!;
      let grid = stem(trace, height, width);
      grid = [side(grid[0], 3, 2), side(grid[1], 3, 2)];
      trace.call(maxPool, [embedding, ...grid]);
      for (const run of parts) grid = run(trace, ...grid);
      trace.hidden([last, ...grid]);
      trace.call(pool, [last, 1, 1]);
    },
    last,
  ];
}

const classes: Record<string, ClassSpec> = {
  ResNetModel: {
    build(c): BuiltModel {
      const [root, forward] = base(c);
      return { root, forward };
    },
  },
  ResNetForImageClassification: {
    build(c): BuiltModel {
      const [backbone, forward, features] = base(c);
      const labels = num(c, 'num_labels');
      const root = userModule('ResNetForImageClassification');
      root.add('resnet', backbone);
      const head = root.add('classifier', userModule('Sequential'));
      const flatten = head.add('0', plain('Flatten'));
      const classifier = head.add('1', labels > 0 ? linear(features, labels) : plain('Identity'));
      return {
        root,
        forward: (trace, input) => {
          forward(trace, input);
          trace.call(flatten, [features]);
          trace.call(classifier, [labels > 0 ? labels : features]);
        },
      };
    },
  },
};

export const resnetTypeSpec: ModelTypeSpec = {
  modelType: 'resnet',
  input: 'image',
  classes,
  // ResNetConfig has no image size; the checkpoints were trained at 224 x 224.
  defaultShape: (c) => [num(c, 'num_channels'), 224, 224],
  image: { channels: (c) => num(c, 'num_channels'), refuse: () => undefined },
};
