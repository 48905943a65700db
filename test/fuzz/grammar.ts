/**
 * fast-check arbitraries for the fuzzer: Python-ish token soups, and structured training scripts
 * from a small grammar (imports, constants, nn.Sequential models of random layer calls, nn.Module
 * classes with __init__ assignments and forward bodies, instantiation, a training set-up).
 */
import fc from 'fast-check';

const LAYER_TYPES = [
  'Linear', 'Conv1d', 'Conv2d', 'Conv3d', 'ConvTranspose2d', 'BatchNorm1d', 'BatchNorm2d', 'LayerNorm', 'GroupNorm',
  'Embedding', 'LSTM', 'GRU', 'RNN', 'MultiheadAttention', 'TransformerEncoderLayer', 'TransformerEncoder', 'Dropout',
  'ReLU', 'GELU', 'SiLU', 'Tanh', 'Sigmoid', 'Softmax', 'LogSoftmax', 'Flatten', 'Unflatten', 'MaxPool2d', 'AvgPool2d',
  'AdaptiveAvgPool2d', 'Identity', 'Upsample', 'PixelShuffle', 'Bilinear', 'ModuleList', 'ModuleDict', 'Parameter',
  'NotALayer', 'linear', 'Module',
];
const CLASS_NAMES = ['Net', 'Block', 'Encoder', 'MLP', 'CNN', 'Model', 'Head'];
const MODEL_NAMES = ['model', 'net', 'encoder', 'head', 'm', 'model2'];
const CONST_NAMES = ['BATCH_SIZE', 'HIDDEN', 'IN_DIM', 'NUM_CLASSES', 'EPOCHS', 'LR', 'DEPTH', 'SHAPE', 'batch_size'];
const PARAM_NAMES = ['in_dim', 'hidden', 'out_dim', 'num_layers', 'p', 'k', 'channels', 'depth'];
const ATTRIBUTES = ['fc', 'fc1', 'fc2', 'conv', 'bn', 'drop', 'act', 'head', 'encoder', 'blocks', 'layers', 'emb', 'sub'];
const KEYWORDS = ['in_features', 'out_features', 'bias', 'kernel_size', 'stride', 'padding', 'dim', 'p', 'inplace', 'num_layers', 'batch_first', 'dtype', 'device', 'd_model', 'nhead'];

const integer = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 4096 }).map(String) },
  { weight: 1, arbitrary: fc.integer({ min: -10, max: -1 }).map(String) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('2**31', '10**400', '1_024', '0x10', '0o7', '0b1', '0', '00', '1L') },
);
const float = fc.oneof(
  fc.double().map(String),
  fc.constantFrom('0.5', '1e-3', '3e-4', '1e309', '.5', '5.', '1_0.0_1', '-0.0', '1e-400', '2j'),
);
const text = fc.oneof(
  fc.constantFrom('"relu"', '"cuda"', "'same'", 'f"{x}"', 'f"{x:{y}}"', '"""doc"""', 'b"x"', 'r"\\d"', "''", 'u"é"'),
  fc.string({ maxLength: 12 }).map((s) => JSON.stringify(s)),
);
const name = fc.oneof(fc.constantFrom(...CONST_NAMES, ...PARAM_NAMES, 'x', 'self', 'args.hidden', 'config["h"]', 'device'), fc.constantFrom('None', 'True', 'False', '...'));

const leaf = fc.oneof({ weight: 4, arbitrary: integer }, { weight: 1, arbitrary: float }, { weight: 1, arbitrary: text }, { weight: 3, arbitrary: name });

const layerPrefix = fc.constantFrom('nn.', 'nn.', 'nn.', 'torch.nn.', '', 'F.', 'layers.');

const { expr, layer } = fc.letrec<{ expr: string; layer: string }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', maxDepth: 5 },
    { weight: 8, arbitrary: leaf },
    { weight: 2, arbitrary: fc.tuple(tie('expr'), fc.constantFrom(' + ', ' * ', ' // ', ' - ', ' ** ', ' / ', ' % ', ' if x else '), tie('expr')).map(([a, op, b]) => a + op + b) },
    { weight: 1, arbitrary: tie('expr').map((e) => `(${e})`) },
    { weight: 1, arbitrary: fc.array(tie('expr'), { maxLength: 4 }).map((xs) => `[${xs.join(', ')}]`) },
    { weight: 1, arbitrary: fc.array(tie('expr'), { maxLength: 4 }).map((xs) => `(${xs.join(', ')}${xs.length === 1 ? ',' : ''})`) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('int', 'float', 'max', 'min', 'round', 'abs', 'len', 'f', 'range'), fc.array(tie('expr'), { maxLength: 3 })).map(([f, xs]) => `${f}(${xs.join(', ')})`) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('-', '+', '~', 'not ', '*', '**'), tie('expr')).map(([op, e]) => op + e) },
    { weight: 1, arbitrary: fc.tuple(tie('expr'), fc.integer({ min: 0, max: 3 })).map(([e, i]) => `${e}[${i}]`) },
    { weight: 2, arbitrary: tie('layer') },
  ),
  layer: fc.oneof(
    { depthSize: 'small', maxDepth: 4 },
    {
      weight: 6,
      arbitrary: fc
        .tuple(layerPrefix, fc.constantFrom(...LAYER_TYPES), fc.array(tie('expr'), { maxLength: 4 }), fc.array(fc.tuple(fc.constantFrom(...KEYWORDS), tie('expr')), { maxLength: 3 }))
        .map(([prefix, type, args, kwargs]) => `${prefix}${type}(${[...args, ...kwargs.map(([k, v]) => `${k}=${v}`)].join(', ')})`),
    },
    { weight: 2, arbitrary: fc.array(tie('layer'), { maxLength: 5 }).map((xs) => `nn.Sequential(${xs.join(', ')})`) },
    { weight: 1, arbitrary: fc.array(tie('layer'), { maxLength: 3 }).map((xs) => `nn.ModuleList([${xs.join(', ')}])`) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...CLASS_NAMES), fc.array(tie('expr'), { maxLength: 3 })).map(([c, xs]) => `${c}(${xs.join(', ')})`) },
    { weight: 1, arbitrary: fc.tuple(tie('expr'), fc.constantFrom('*', '**')).map(([e, s]) => `nn.Sequential(${s}${e})`) },
  ),
}));

const IMPORTS = [
  'import torch', 'import torch.nn as nn', 'from torch import nn', 'import torch.nn', 'from torch.nn import Linear, ReLU, Sequential',
  'import torch.nn.functional as F', 'from torch.nn import *', 'import torch as nn', 'import argparse', 'from torch import optim',
  'import torch.nn as layers', 'from torch.utils.data import DataLoader',
];
const imports = fc.subarray(IMPORTS).chain((list) => fc.shuffledSubarray(list, { minLength: list.length }));

const constant = fc.tuple(fc.constantFrom(...CONST_NAMES), expr).map(([n, e]) => `${n} = ${e}`);

const wrapper = fc.constantFrom('', '', '', '.to(device)', '.cuda()', '.half()', '.to("cuda").train()', '.float().eval()', '.bfloat16()');

const sequentialModel = fc
  .tuple(fc.constantFrom(...MODEL_NAMES), fc.array(layer, { maxLength: 8 }), wrapper, fc.boolean())
  .map(([n, layers, wrap, multiline]) => `${n} = nn.Sequential(${multiline ? `\n    ${layers.join(',\n    ')},\n` : layers.join(', ')})${wrap}`);

const I2 = '        ';
const initStatement = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.constantFrom(...ATTRIBUTES), layer).map(([a, l]) => `${I2}self.${a} = ${l}`) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...PARAM_NAMES, 'x', 'n'), expr).map(([n, e]) => `${I2}${n} = ${e}`) },
  { weight: 2, arbitrary: fc.constant(`${I2}super().__init__()`) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...ATTRIBUTES), fc.constantFrom(...CLASS_NAMES), fc.array(expr, { maxLength: 2 })).map(([a, c, xs]) => `${I2}self.${a} = ${c}(${xs.join(', ')})`) },
  { weight: 1, arbitrary: fc.tuple(expr, layer).map(([n, l]) => `${I2}for i in range(${n}):\n${I2}    self.add_module(f"l{i}", ${l})`) },
  { weight: 1, arbitrary: fc.tuple(expr, fc.constantFrom(...ATTRIBUTES), layer, layer).map(([c, a, l1, l2]) => `${I2}if ${c}:\n${I2}    self.${a} = ${l1}\n${I2}else:\n${I2}    self.${a} = ${l2}`) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...ATTRIBUTES), expr).map(([a, e]) => `${I2}self.${a} = ${e}`) },
  { weight: 1, arbitrary: fc.constantFrom(`${I2}pass`, `${I2}return`, `${I2}self.apply(init_weights)`, `${I2}del self.fc`, `${I2}self.fc.weight = self.emb.weight`) },
);
const forwardStatement = fc.oneof(
  fc.constantFrom(...ATTRIBUTES).map((a) => `${I2}x = self.${a}(x)`),
  fc.constantFrom('relu', 'gelu', 'softmax', 'dropout', 'max_pool2d').map((f) => `${I2}x = F.${f}(x)`),
  fc.constant(`${I2}x = x.view(x.size(0), -1)`),
  fc.constant(`${I2}x = torch.cat([x, x], dim=1)`),
  fc.constant(`${I2}for block in self.blocks:\n${I2}    x = block(x) + x`),
  fc.tuple(fc.constantFrom('f', 'self.forward', 'torch.matmul', 'self'), expr).map(([f, e]) => `${I2}x = ${f}(${e})`),
  fc.constant(`${I2}return x`),
);
const parameter = fc.tuple(fc.constantFrom(...PARAM_NAMES), fc.option(expr, { freq: 2 })).map(([p, d]) => (d === null ? p : `${p}=${d}`));

const classDefinition = fc
  .tuple(
    fc.constantFrom(...CLASS_NAMES),
    fc.constantFrom('nn.Module', 'nn.Module', 'torch.nn.Module', 'Module', 'nn.Sequential', 'object', 'Net', 'nn.Module, metaclass=Meta'),
    fc.uniqueArray(parameter, { maxLength: 4, selector: (p) => p.split('=')[0] }),
    fc.array(initStatement, { maxLength: 8 }),
    fc.array(forwardStatement, { maxLength: 6 }),
  )
  .map(
    ([c, base, params, init, forward]) =>
      `class ${c}(${base}):\n    """A model."""\n\n    def __init__(${['self', ...params].join(', ')}):\n${init.length ? init.join('\n') : `${I2}pass`}\n\n    def forward(self, x):\n${forward.length ? forward.join('\n') : `${I2}return x`}\n`,
  );

const instantiation = fc
  .tuple(fc.constantFrom(...MODEL_NAMES), fc.constantFrom(...CLASS_NAMES), fc.array(expr, { maxLength: 3 }), fc.array(fc.tuple(fc.constantFrom(...PARAM_NAMES), expr), { maxLength: 2 }), wrapper)
  .map(([n, c, args, kwargs, wrap]) => `${n} = ${c}(${[...args, ...kwargs.map(([k, v]) => `${k}=${v}`)].join(', ')})${wrap}`);

const trainingStatement = fc.oneof(
  fc.tuple(fc.constantFrom(...MODEL_NAMES), expr).map(([m, e]) => `loader = DataLoader(dataset, batch_size=${e}, shuffle=True)\n_ = ${m}`),
  fc.tuple(fc.constantFrom('Adam', 'AdamW', 'SGD', 'RMSprop', 'Adagrad', 'LBFGS', 'Foo'), fc.constantFrom(...MODEL_NAMES), expr).map(([o, m, lr]) => `optimizer = torch.optim.${o}(${m}.parameters(), lr=${lr})`),
  fc.constant('scaler = torch.cuda.amp.GradScaler()\nwith torch.autocast("cuda", dtype=torch.float16):\n    loss = model(x).sum()'),
  fc.tuple(expr, expr).map(([a, b]) => `x = torch.randn(${a}, ${b})`),
  fc.tuple(expr).map(([e]) => `parser = argparse.ArgumentParser()\nparser.add_argument("--batch-size", type=int, default=${e})\nargs = parser.parse_args()`),
  fc.tuple(fc.constantFrom(...MODEL_NAMES), expr).map(([m, e]) => `for epoch in range(${e}):\n    for x, y in loader:\n        optimizer.zero_grad()\n        loss = criterion(${m}(x), y)\n        loss.backward()\n        optimizer.step()`),
  fc.constantFrom('model.half()', 'model = torch.compile(model)', 'model = nn.DataParallel(model)', 'torch.set_default_dtype(torch.float16)'),
);

/** A whole training script from the grammar: imports, constants, model code, instantiation, training set-up. */
export const programArbitrary: fc.Arbitrary<string> = fc
  .tuple(
    imports,
    fc.array(constant, { maxLength: 6 }),
    fc.array(fc.oneof({ weight: 2, arbitrary: classDefinition }, { weight: 2, arbitrary: sequentialModel }), { maxLength: 4 }),
    fc.array(instantiation, { maxLength: 3 }),
    fc.array(trainingStatement, { maxLength: 5 }),
    fc.boolean(),
  )
  .map(([imps, consts, models, instances, training, mainGuard]) => {
    const body = [...models, ...instances, ...training].join('\n\n');
    return `${imps.join('\n')}\n\n${consts.join('\n')}\n\n${mainGuard ? `if __name__ == "__main__":\n${body.replace(/^/gm, '    ')}` : body}\n`;
  });

const SOUP_TOKENS = [
  'nn.Sequential(', 'nn.Linear(', 'nn.Conv2d(', 'nn.Module', 'class ', 'def ', '__init__', 'forward', 'self', 'self.', 'super().__init__()',
  'import torch', 'import torch.nn as nn', 'from torch import nn', 'return ', 'model', 'BATCH_SIZE', ' = ', '=', ':', ',', '.', '(', ')',
  '[', ']', '{', '}', '*', '**', '+', '-', '/', '//', '@', 'lambda ', 'if ', 'else', 'for ', ' in ', 'range(', 'with ', 'async ',
  'await ', 'yield ', 'None', 'True', '"', "'", '"""', '#', '\\', '\n', '\n    ', '\n        ', '\n\t', '\r\n', ' ', '  ', '\0', '\uFEFF',
];
const soupToken = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...SOUP_TOKENS) },
  { weight: 3, arbitrary: integer },
  { weight: 1, arbitrary: float },
  { weight: 1, arbitrary: text },
  { weight: 2, arbitrary: fc.constantFrom(...CONST_NAMES, ...PARAM_NAMES, ...CLASS_NAMES, ...MODEL_NAMES, ...LAYER_TYPES) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) },
);

/** Python-ish tokens in a random order, lone surrogates and control characters included. */
export const soupArbitrary: fc.Arbitrary<string> = fc.array(soupToken, { maxLength: 400 }).map((tokens) => tokens.join(''));

/** One value of `arbitrary` for this seed (fast-check's own generator, so the same seed gives the same value). */
export function sampleOne(arbitrary: fc.Arbitrary<string>, seed: number): string {
  return fc.sample(arbitrary, { seed, numRuns: 1 })[0] ?? '';
}
