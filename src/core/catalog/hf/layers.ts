/** The torch.nn layers transformers models are built from, with the parameters PyTorch gives them. */
import { Module } from './moduleTree';

export function linear(inFeatures: number, outFeatures: number, bias = true): Module {
  const m = new Module('Linear', true);
  m.param('weight', inFeatures * outFeatures);
  if (bias) m.param('bias', outFeatures);
  return m;
}

export function embedding(count: number, dim: number): Module {
  const m = new Module('Embedding', true);
  m.param('weight', count * dim);
  return m;
}

export function layerNorm(dim: number): Module {
  const m = new Module('LayerNorm', true);
  m.param('weight', dim);
  m.param('bias', dim);
  return m;
}

export function conv2d(inChannels: number, outChannels: number, kernel: readonly [number, number], bias = true, groups = 1): Module {
  const m = new Module('Conv2d', true);
  m.param('weight', outChannels * (inChannels / groups) * kernel[0] * kernel[1]);
  if (bias) m.param('bias', outChannels);
  return m;
}

/** `nn.BatchNorm2d(channels)`: a weight and a bias (its running statistics are buffers, not parameters). */
export function batchNorm2d(channels: number): Module {
  const m = new Module('BatchNorm2d', true);
  m.param('weight', channels);
  m.param('bias', channels);
  return m;
}

/** A norm of the library's own with a weight and no bias (LlamaRMSNorm, MixtralRMSNorm, T5LayerNorm). */
export function weightOnlyNorm(type: string, dim: number): Module {
  const m = new Module(type, false);
  m.param('weight', dim);
  return m;
}

/** A torch.nn module without parameters: Dropout, Tanh, ReLU, Identity, CrossEntropyLoss. */
export function plain(type: string): Module {
  return new Module(type, true);
}

/** A module of the library's own with no parameters of its own (containers, activations, rotary embeddings). */
export function userModule(type: string): Module {
  return new Module(type, false);
}

/**
 * `ACT2FN[name]` of transformers 5.18 (activations.py): the torch.nn classes are layer modules and
 * become rows when called; the library's own activation classes call functions and add no row.
 */
const ACTIVATIONS: Readonly<Record<string, { readonly type: string; readonly torch: boolean; readonly params?: number }>> = {
  gelu: { type: 'GELUActivation', torch: false },
  gelu_10: { type: 'ClippedGELUActivation', torch: false },
  gelu_fast: { type: 'FastGELUActivation', torch: false },
  gelu_new: { type: 'NewGELUActivation', torch: false },
  gelu_python: { type: 'GELUActivation', torch: false },
  gelu_pytorch_tanh: { type: 'GELUTanh', torch: false },
  gelu_python_tanh: { type: 'GELUTanh', torch: false },
  gelu_accurate: { type: 'AccurateGELUActivation', torch: false },
  laplace: { type: 'LaplaceActivation', torch: false },
  linear: { type: 'LinearActivation', torch: false },
  mish: { type: 'MishActivation', torch: false },
  quick_gelu: { type: 'QuickGELUActivation', torch: false },
  relu2: { type: 'ReLUSquaredActivation', torch: false },
  silu: { type: 'SiLUActivation', torch: false },
  sqrtsoftplus: { type: 'SqrtSoftplusActivation', torch: false },
  hardswish: { type: 'Hardswish', torch: true },
  leaky_relu: { type: 'LeakyReLU', torch: true },
  relu: { type: 'ReLU', torch: true },
  relu6: { type: 'ReLU6', torch: true },
  sigmoid: { type: 'Sigmoid', torch: true },
  swish: { type: 'SiLU', torch: true },
  tanh: { type: 'Tanh', torch: true },
  prelu: { type: 'PReLU', torch: true, params: 1 },
};

export function knownActivation(name: string): boolean {
  return Object.prototype.hasOwnProperty.call(ACTIVATIONS, name);
}

export function knownActivations(): string[] {
  return Object.keys(ACTIVATIONS).sort();
}

/** A fresh `ACT2FN[name]` module (the config was checked, so the name is known). */
export function activation(name: string): Module {
  const spec = ACTIVATIONS[name];
  if (!spec) throw new Error(`unknown activation ${name}`);
  const m = new Module(spec.type, spec.torch);
  if (spec.params) m.param('weight', spec.params);
  return m;
}
