/**
 * Hand-written input generators for the fuzzer: mutations of real training scripts, deep
 * nesting, recursion in the source, huge literals, degenerate files and multi-megabyte files.
 * Every generator takes its randomness from the `Rng` it is given, so an input is a pure
 * function of (run seed, input index).
 */
import type { TextChange } from '../../src/core/parsing/incrementalParse';
import type { CorpusFile } from './corpus';
import type { Rng } from './rng';

export interface FuzzInput {
  /** `family:variant`, e.g. `mutate:truncate+crlf` or `deep:parens`. */
  readonly kind: string;
  readonly source: string;
}

const HEADER = 'import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n';

/** Characters and snippets that break lexers: control characters, lone surrogates, BOMs, quotes, brackets. */
const NASTY = [
  '\0', '\0\0\0', '\uD800', '\uDFFF', '\uDBFF', '\uDC00x', '\uD83D\uDE00', '\uFEFF', '\uFFFE', '\uFFFF', '\u2028', '\u2029',
  '\u0085', '\u00A0', '\u200B', '\u0301', '\u202E', 'é', '中文', 'ｎｎ', '\r', '\r\n', '\n\r', '\t', '\f', '\v', '\x1b[31m',
  '\\', '\\\n', '"', "'", '"""', "'''", 'f"{', '{{', '}}', 'b"\\xff"', 'r"\\"', '#', '# -*- coding: latin-1 -*-\n', '(', ')',
  '[', ']', '{', '}', ':', ',', ';', '=', '==', '@', '$', '?', '!', '`', '->', ':=', '**', '*', '...', '.', ' ', '    ',
  '\n', '\n\n\n', 'lambda', 'lambda:', 'nn.Sequential(', 'nn.Linear(', 'self', 'self.', 'super().__init__()', 'class ',
  'def ', 'if ', 'else:', 'elif', 'async ', 'await ', 'yield', 'return', 'global x', 'nonlocal', 'del ', 'import ',
  'from . import *', '\\N{', '0x', '1e', '1_', '_', '__init__', 'None', 'True', 'model', 'BATCH_SIZE', '10**400', 'match ',
  'case _:', 'print ', 'exec', 'type X = int', '<<<<<<< HEAD\n', '=======\n', '>>>>>>> branch\n',
];

/** Bytes decoded as latin1: what a UTF-8 (or binary) file looks like when read with the wrong encoding. */
function latin1Garbage(rng: Rng, length: number): string {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = rng.chance(0.5) ? rng.between(0x80, 0xff) : rng.int(0x100);
  return bytes.toString('latin1');
}

function mojibake(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}

function nasty(rng: Rng): string {
  const roll = rng.int(10);
  if (roll === 0) return latin1Garbage(rng, rng.between(1, 16));
  if (roll === 1) return mojibake(rng.pick(['é', '😀', '中文', 'ñ', '∑', '\uFEFF']));
  if (roll === 2) return String.fromCharCode(rng.int(0x10000));
  return rng.pick(NASTY);
}

function lines(text: string): string[] {
  return text.split('\n');
}

type Mutator = (rng: Rng, text: string, corpus: readonly CorpusFile[]) => string;

const MUTATORS: Record<string, Mutator> = {
  'delete-lines': (rng, text) => {
    const ls = lines(text);
    const at = rng.int(ls.length);
    ls.splice(at, rng.between(1, 6));
    return ls.join('\n');
  },
  'duplicate-lines': (rng, text) => {
    const ls = lines(text);
    const at = rng.int(ls.length);
    const block = ls.slice(at, at + rng.between(1, 8));
    const copies = rng.chance(0.1) ? rng.between(2, 50) : 1;
    ls.splice(rng.int(ls.length + 1), 0, ...Array.from({ length: copies }, () => block).flat());
    return ls.join('\n');
  },
  'swap-lines': (rng, text) => {
    const ls = lines(text);
    for (let k = rng.between(1, 4); k > 0; k--) {
      const a = rng.int(ls.length);
      const b = rng.int(ls.length);
      [ls[a], ls[b]] = [ls[b]!, ls[a]!];
    }
    return ls.join('\n');
  },
  truncate: (rng, text) => text.slice(0, rng.int(text.length + 1)),
  'insert-chars': (rng, text) => {
    let out = text;
    for (let k = rng.between(1, 8); k > 0; k--) {
      const at = rng.int(out.length + 1);
      out = out.slice(0, at) + nasty(rng) + out.slice(at);
    }
    return out;
  },
  'delete-chars': (rng, text) => {
    let out = text;
    for (let k = rng.between(1, 8); k > 0; k--) {
      const at = rng.int(out.length + 1);
      out = out.slice(0, at) + out.slice(at + rng.between(1, 3));
    }
    return out;
  },
  'indent-damage': (rng, text) =>
    lines(text)
      .map((line) => {
        if (!rng.chance(0.3)) return line;
        const body = line.trimStart();
        const indent = line.length - body.length;
        return rng.pick([
          () => '\t'.repeat(Math.ceil(indent / 4)) + body,
          () => body,
          () => ' '.repeat(indent + rng.between(1, 3)) + body,
          () => ' '.repeat(Math.max(0, indent - rng.between(1, 3))) + body,
          () => ' \t'.repeat(rng.between(1, 3)) + body,
          () => '\f' + line,
        ])();
      })
      .join('\n'),
  'reindent-block': (rng, text) => {
    const ls = lines(text);
    const start = rng.int(ls.length);
    const shift = rng.pick([' ', '  ', '    ', '\t', '        ']);
    for (let i = start; i < Math.min(ls.length, start + rng.between(2, 20)); i++) {
      ls[i] = rng.chance(0.5) ? shift + ls[i]! : ls[i]!.replace(/^\s{1,4}/, '');
    }
    return ls.join('\n');
  },
  crlf: (rng, text) => {
    const style = rng.int(3);
    if (style === 0) return text.replace(/\n/g, '\r\n');
    if (style === 1) return text.replace(/\n/g, '\r');
    return text.replace(/\n/g, () => rng.pick(['\n', '\r\n', '\r', '\n\r']));
  },
  latin1: (rng, text) => {
    if (rng.chance(0.3)) return mojibake(text + 'é😀中文');
    const at = rng.int(text.length + 1);
    return text.slice(0, at) + latin1Garbage(rng, rng.between(1, 64)) + text.slice(at);
  },
  numbers: (rng, text) =>
    text.replace(/\b\d[\d_]*(\.\d+)?(e-?\d+)?\b/g, (match) =>
      rng.chance(0.4)
        ? rng.pick(['0', '-1', '1', '10**400', '1e309', '-1e309', '5e-324', '0.5', '-0.0', '0x7fffffff', '99999999999999999999999', '2**53', '1_000_000_000', 'None', '"3"', 'nan', '(1/0)', '0//0', '3j', '1e-400'])
        : match,
    ),
  names: (rng, text) => {
    const identifiers = [...new Set(text.match(/\b[A-Za-z_][A-Za-z0-9_]*\b/g) ?? [])];
    if (identifiers.length < 2) return text;
    const from = rng.pick(identifiers);
    const to = rng.chance(0.5) ? rng.pick(identifiers) : rng.pick(['self', 'nn', 'model', 'Sequential', '__init__', 'super', 'torch', 'x', 'None', 'class', 'def', 'forward']);
    return text.replace(new RegExp(`\\b${from}\\b`, 'g'), () => (rng.chance(0.6) ? to : from));
  },
  splice: (rng, text, corpus) => {
    const other = lines(rng.pick(corpus).text);
    const at = rng.int(other.length);
    const piece = other.slice(at, at + rng.between(1, 30));
    const ls = lines(text);
    ls.splice(rng.int(ls.length + 1), 0, ...piece);
    return ls.join('\n');
  },
  unclose: (rng, text) => {
    const at = rng.int(text.length + 1);
    return text.slice(0, at) + rng.pick(['(', '[', '{', '"', "'", '"""', "'''", 'nn.Sequential(', 'f"{', '\\']) + text.slice(at);
  },
  'nul-run': (rng, text) => {
    const at = rng.int(text.length + 1);
    return text.slice(0, at) + '\0'.repeat(rng.between(1, 2000)) + text.slice(at);
  },
};
const MUTATOR_NAMES = Object.keys(MUTATORS).sort();

/** A corpus file (rarely two, concatenated) after one to four random mutations. */
export function mutationInput(rng: Rng, corpus: readonly CorpusFile[]): FuzzInput {
  let text = rng.pick(corpus).text;
  if (rng.chance(0.1)) text += '\n' + rng.pick(corpus).text;
  const applied: string[] = [];
  for (let k = rng.between(1, 4); k > 0; k--) {
    const name = rng.pick(MUTATOR_NAMES);
    text = MUTATORS[name]!(rng, text, corpus);
    applied.push(name);
  }
  return { kind: `mutate:${applied.join('+')}`, source: text };
}

function nestedIndented(depth: number, width: number, open: (level: number) => string[], body: string[]): string {
  const out: string[] = [];
  for (let level = 0; level < depth; level++) out.push(...open(level).map((line) => ' '.repeat(level * width) + line));
  out.push(...body.map((line) => ' '.repeat(depth * width) + line));
  return out.join('\n');
}

const DEEP: Record<string, (rng: Rng) => string> = {
  parens: (rng) => {
    const d = rng.between(1000, 3000);
    return `${HEADER}BATCH_SIZE = ${'('.repeat(d)}32${')'.repeat(d)}\nmodel = nn.Sequential(nn.Linear(${'('.repeat(d)}8${')'.repeat(d)}, 4))\n`;
  },
  'parens-unclosed': (rng) => `${HEADER}model = nn.Sequential(${'('.repeat(rng.between(1000, 3000))}nn.Linear(4, 4)\n`,
  brackets: (rng) => {
    const d = rng.between(1000, 3000);
    return `${HEADER}SHAPE = ${'['.repeat(d)}1${']'.repeat(d)}\nx = ${'{'.repeat(d)}1${'}'.repeat(d)}\n`;
  },
  'mixed-brackets': (rng) => {
    const d = rng.between(1000, 2500);
    const opens = Array.from({ length: d }, () => rng.pick(['(', '[', '{', 'f(', 'nn.Sequential(', '(1, ', '[0, ']));
    const closer = (open: string) => (open.endsWith('(') || open.startsWith('(') ? ')' : open.startsWith('[') ? ']' : open === '{' ? '}' : ')');
    const closes = opens.map(closer).reverse();
    if (rng.chance(0.3)) closes.splice(rng.int(closes.length), rng.between(1, 10));
    return `${HEADER}model = nn.Sequential(${opens.join('')}nn.Linear(4, 4)${closes.join('')})\n`;
  },
  sequential: (rng) => {
    const d = rng.between(300, 600);
    const withLayers = rng.chance(0.5);
    const open = withLayers ? 'nn.Sequential(nn.Linear(16, 16), nn.ReLU(), ' : 'nn.Sequential(';
    const close = rng.chance(0.15) ? '' : ')'.repeat(d);
    return `${HEADER}BATCH_SIZE = 64\nmodel = ${open.repeat(d)}nn.Linear(16, 16)${close}\noptimizer = torch.optim.Adam(model.parameters())\n`;
  },
  classes: (rng) => {
    const width = rng.pick([1, 2, 4]);
    const depth = width === 4 ? rng.between(20, 60) : rng.between(30, 100);
    return HEADER + nestedIndented(depth, width, (level) => [`class Net${level}(nn.Module):`, ` `.repeat(width) + `def __init__(self):`, ' '.repeat(2 * width) + `self.fc = nn.Linear(${level + 1}, ${level + 2})`], ['pass']) + '\nmodel = Net0()\n';
  },
  ifs: (rng) => {
    const width = rng.pick([1, 4]);
    const depth = width === 4 ? rng.between(50, 150) : rng.between(100, 400);
    const kind = rng.pick(['if True:', 'for i in range(2):', 'with torch.no_grad():', 'try:', 'while x:', 'def f():']);
    return HEADER + nestedIndented(depth, width, () => [kind], ['model = nn.Sequential(nn.Linear(4, 4))', 'BATCH_SIZE = 8']) + '\n';
  },
  'module-chain': (rng) => {
    const depth = rng.between(30, 200);
    const out = [HEADER];
    for (let i = 0; i < depth; i++) {
      const sub = i + 1 < depth ? `        self.sub = Block${i + 1}(hidden)\n` : '';
      out.push(`class Block${i}(nn.Module):\n    def __init__(self, hidden=8):\n        super().__init__()\n        self.fc = nn.Linear(hidden, hidden)\n${sub}    def forward(self, x):\n        return self.fc(x)\n\n`);
    }
    out.push('model = Block0(16)\nBATCH_SIZE = 32\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n');
    return out.join('');
  },
  'binary-chain': (rng) => {
    const terms = rng.between(500, 5000);
    const op = rng.pick([' + ', ' * ', ' - ', ' // ', ' ** ', ' + (', ' | ']);
    const chain = Array.from({ length: terms }, () => '1').join(op) + (op === ' + (' ? ')'.repeat(terms - 1) : '');
    return `${HEADER}BATCH_SIZE = ${chain}\nmodel = nn.Sequential(nn.Linear(BATCH_SIZE, 4))\n`;
  },
  'unary-chain': (rng) => `${HEADER}HIDDEN = ${rng.pick(['-', '+', '~']).repeat(rng.between(500, 5000))}8\nmodel = nn.Sequential(nn.Linear(HIDDEN, 4))\n`,
  'attribute-chain': (rng) => {
    const d = rng.between(500, 3000);
    return rng.chance(0.5)
      ? `${HEADER}model = nn.Sequential(nn${'.a'.repeat(d)}(3), nn.Linear(3, 3))\n`
      : `${HEADER}class Net(nn.Module):\n    def __init__(self):\n        self${'.x'.repeat(d)} = nn.Linear(3, 3)\n        self.fc = nn${'.nn'.repeat(d)}.Linear(2, 2)\nmodel = Net()\n`;
  },
  'call-chain': (rng) => {
    const d = rng.between(300, 2000);
    return rng.chance(0.5)
      ? `${HEADER}model = nn.Sequential(nn.Linear(4, 4))${'.to(device)'.repeat(d)}\n`
      : `${HEADER}model = nn.Sequential(nn.Linear(4, 4))${'()'.repeat(d)}\nx = f${'(1)'.repeat(d)}\n`;
  },
  'lambda-chain': (rng) => `${HEADER}f = ${'lambda: '.repeat(rng.between(500, 2000))}nn.Linear(4, 4)\nmodel = nn.Sequential(f())\n`,
  comprehension: (rng) => {
    const d = rng.between(100, 500);
    return `${HEADER}layers = ${'['.repeat(d)}nn.Linear(4, 4)${Array.from({ length: d }, (_, i) => ` for x${i} in range(2)]`).join('')}\nmodel = nn.Sequential(*layers)\n`;
  },
  decorators: (rng) => `${HEADER}${'@decorator\n'.repeat(rng.between(500, 3000))}class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\nmodel = Net()\n`,
  'string-concat': (rng) => `${HEADER}NAME = ${Array.from({ length: rng.between(1000, 5000) }, (_, i) => `"s${i}"`).join(' ')}\nmodel = nn.Sequential(nn.Linear(4, 4))\n`,
  'dedent-storm': (rng) => {
    const out = [HEADER, 'class Net(nn.Module):'];
    for (let i = 0; i < rng.between(500, 2000); i++) out.push(' '.repeat(rng.between(0, 40)) + rng.pick(['def __init__(self):', 'self.fc = nn.Linear(4, 4)', 'if x:', 'else:', 'pass', 'return x', 'super().__init__()']));
    out.push('model = Net()');
    return out.join('\n');
  },
};
const DEEP_NAMES = Object.keys(DEEP).sort();

export function deepInput(rng: Rng): FuzzInput {
  const name = rng.pick(DEEP_NAMES);
  return { kind: `deep:${name}`, source: DEEP[name]!(rng) };
}

const RECURSION: Record<string, (rng: Rng) => string> = {
  'self-building-class': (rng) =>
    `${HEADER}class Net(nn.Module):\n    def __init__(self, hidden=${rng.between(1, 512)}):\n        super().__init__()\n        self.fc = nn.Linear(hidden, hidden)\n        self.inner = Net(hidden)\n        self.${rng.pick(['seq', 'again'])} = nn.Sequential(Net(), nn.ReLU(), Net(hidden * 2))\n\n    def forward(self, x):\n        return self.inner(self.fc(x))\n\nmodel = Net()\nBATCH_SIZE = 16\n`,
  'mutual-classes': (rng) => {
    const n = rng.between(2, 6);
    const classes = Array.from({ length: n }, (_, i) => `class C${i}(nn.Module):\n    def __init__(self, h=4):\n        super().__init__()\n        self.fc = nn.Linear(h, h)\n        self.next = C${(i + 1) % n}(h)\n        self.back = C${(i + n - 1) % n}(h + 1)\n`);
    return `${HEADER}${classes.join('\n')}\nmodel = C0()\nother = C${n - 1}(8)\n`;
  },
  'mutual-functions': (rng) =>
    `${HEADER}def make_a(n):\n    return make_b(n - 1) if n else nn.Linear(4, 4)\n\ndef make_b(n):\n    return nn.Sequential(make_a(n), make_b(n))\n\nHIDDEN = make_a(${rng.between(1, 100)})\nmodel = nn.Sequential(make_a(3), make_b(HIDDEN), nn.Linear(HIDDEN, HIDDEN))\n`,
  'sequential-contains-itself': (rng) => {
    const variants = [
      'model = nn.Sequential(nn.Linear(1, 2), model)\n',
      'model = nn.Sequential(nn.Linear(4, 4))\nmodel = nn.Sequential(model, model, nn.Linear(4, 4))\n',
      'model = nn.Sequential(*model)\n',
      'a = nn.Sequential(b)\nb = nn.Sequential(a)\nmodel = nn.Sequential(a, b)\n',
      'model = nn.Sequential(nn.Linear(4, 4), nn.Sequential(model))\nmodel.add_module("self", model)\n',
    ];
    return `${HEADER}${rng.pick(variants)}BATCH_SIZE = 8\n`;
  },
  'self-referential-constants': (rng) =>
    `${HEADER}HIDDEN = HIDDEN * 2\nA = B\nB = A\nC = [C] * 3\nD = (D, D)\nE = E + [E]\nWIDTH = WIDTH if WIDTH else ${rng.between(1, 64)}\nmodel = nn.Sequential(nn.Linear(HIDDEN, A), nn.Linear(B, C), nn.Linear(D, E), nn.Linear(WIDTH, WIDTH))\nBATCH_SIZE = BATCH_SIZE\n`,
  'inherits-itself': () =>
    `${HEADER}class Net(Net):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n\nclass A(B):\n    pass\n\nclass B(A, nn.Module):\n    def __init__(self):\n        self.fc = nn.Linear(2, 2)\n        self.b = B()\n\nnn.Module = Net\nclass C(nn.Module):\n    def __init__(self):\n        self.c = C()\n\nmodel = B()\nm2 = C()\n`,
  'default-refers-to-class': () =>
    `${HEADER}class Net(nn.Module):\n    def __init__(self, h=Net, k=h, inner=Net()):\n        super().__init__()\n        self.fc = nn.Linear(h, k)\n        self.inner = inner\n\nmodel = Net(h=Net(h=Net(h=4)))\n`,
  'keyword-recursion': (rng) => {
    const depth = rng.between(10, 200);
    return `${HEADER}class Net(nn.Module):\n    def __init__(self, child=None, h=4):\n        super().__init__()\n        self.fc = nn.Linear(h, h)\n        self.child = child\n\nmodel = ${'Net(child='.repeat(depth)}None${')'.repeat(depth)}\n`;
  },
  'splat-self': (rng) =>
    `${HEADER}LAYERS = [nn.Linear(4, 4)] * ${rng.pick(['10', '10**3', '10**6', 'LAYERS'])}\nLAYERS = LAYERS + LAYERS\nmodel = nn.Sequential(*LAYERS, *model)\n`,
  'nested-class-in-init': () =>
    `${HEADER}class Outer(nn.Module):\n    def __init__(self):\n        super().__init__()\n        class Outer(nn.Module):\n            def __init__(self):\n                self.o = Outer()\n        self.o = Outer()\n        self.fc = nn.Linear(3, 3)\n\nmodel = Outer()\n`,
  'init-calls-forward': () =>
    `${HEADER}class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 4)\n        self.__init__()\n        self.forward(self)\n\n    def forward(self, x):\n        return self.forward(x)\n\nmodel = Net()\nmodel = model.to(model)\n`,
};
const RECURSION_NAMES = Object.keys(RECURSION).sort();

export function recursionInput(rng: Rng): FuzzInput {
  const name = rng.pick(RECURSION_NAMES);
  return { kind: `recursion:${name}`, source: RECURSION[name]!(rng) };
}

const HUGE: Record<string, (rng: Rng) => string> = {
  bigint: (rng) => {
    const digits = '9'.repeat(rng.between(20, 20000));
    return `${HEADER}BATCH_SIZE = ${digits}\nHIDDEN = ${digits}\nmodel = nn.Sequential(nn.Linear(HIDDEN, ${digits}), nn.Conv2d(3, ${digits}, kernel_size=${digits}))\n`;
  },
  'numeric-extremes': (rng) => {
    const values = ['1e308', '1e309', '-1e309', '1e-400', '0.0', '-0.0', '5e-324', '1.7976931348623157e308', '0x7fffffffffffffff', '0o777', '0b1010', '1_000_000_000_000', '10**400', '2**1024', '2**53+1', '-2**63', '0/0', '1//0', '1%0', '(-8)**0.5', '10**-400', '1e5j', '-1', '0', '2**31', '2**32', '2.5'];
    const v = () => rng.pick(values);
    return `${HEADER}BATCH_SIZE = ${v()}\nIN = ${v()}\nOUT = ${v()}\nmodel = nn.Sequential(nn.Linear(IN, OUT), nn.Conv2d(${v()}, ${v()}, kernel_size=${v()}, stride=${v()}, padding=${v()}), nn.Embedding(${v()}, ${v()}), nn.LayerNorm(${v()}), nn.Dropout(${v()}))\nx = torch.randn(BATCH_SIZE, ${v()})\noptimizer = torch.optim.Adam(model.parameters(), lr=${v()})\n`;
  },
  'list-multiply': (rng) => {
    // Mostly small counts; now and then one that no list should be expanded to.
    const k = rng.chance(0.1) ? rng.between(7, 12) : rng.between(1, 6);
    const item = rng.pick(['[64]', '(64,)', '[64, 128]', '[[0] * 1000]', '[nn.Linear(4, 4)]']);
    const count = rng.pick([`10**${k}`, `${10 ** k}`, `2**${k * 3}`, '1e400', '-5', '0', '2.5']);
    return `${HEADER}CHANNELS = ${item} * ${count}\nSHAPE = CHANNELS + CHANNELS\nBATCH_SIZE = 32\nmodel = nn.Sequential(nn.Linear(4, 4), *CHANNELS)\nx = torch.randn(BATCH_SIZE, 4)\n`;
  },
  'long-string': (rng) => {
    const size = rng.between(100_000, 500_000);
    return `${HEADER}DOC = "${'x'.repeat(size)}"\nmodel = nn.Sequential(nn.Linear(4, 4))  # ${'y'.repeat(1000)}\n`;
  },
  'long-identifier': (rng) => {
    const name = `n${'a'.repeat(rng.between(10_000, 50_000))}`;
    return `${HEADER}${name} = 4\nmodel = nn.Sequential(nn.Linear(${name}, ${name}))\nclass ${name}(nn.Module):\n    def __init__(self):\n        self.${name} = nn.Linear(${name}, 2)\n${name}2 = ${name}()\n`;
  },
  'long-list': (rng) => {
    const n = rng.between(1000, 10_000);
    return `${HEADER}SIZES = [${Array.from({ length: n }, (_, i) => i % 1000).join(', ')}]\nmodel = nn.Sequential(nn.Linear(4, 4))\n`;
  },
  'many-layers': (rng) => {
    const n = rng.between(100, 800);
    return `${HEADER}BATCH_SIZE = 128\nmodel = nn.Sequential(\n${'    nn.Linear(64, 64), nn.ReLU(),\n'.repeat(n)})\noptimizer = torch.optim.AdamW(model.parameters())\n`;
  },
  'many-models': (rng) => {
    const n = rng.between(20, 150);
    return `${HEADER}BATCH_SIZE = 64\n${Array.from({ length: n }, (_, i) => `m${i} = nn.Sequential(nn.Linear(${i + 1}, 8), nn.ReLU())\n`).join('')}`;
  },
  'many-arguments': (rng) => `${HEADER}model = nn.Sequential(nn.Linear(${Array.from({ length: rng.between(500, 3000) }, (_, i) => (i % 2 ? `k${i}=${i}` : String(i))).join(', ')}))\n`,
  'long-line': (rng) => `${HEADER}model = nn.Sequential(${'nn.Linear(8, 8), '.repeat(rng.between(300, 1200))})\nBATCH_SIZE = 8\n`,
};
const HUGE_NAMES = Object.keys(HUGE).sort();

export function hugeInput(rng: Rng): FuzzInput {
  const name = rng.pick(HUGE_NAMES);
  return { kind: `huge:${name}`, source: HUGE[name]!(rng) };
}

const EDGE = [
  '', '\n', ' ', '\0', '\uFEFF', '\uFEFFimport torch\n', '\r', '\r\n', '\t', '\\', '#', '"""', "'''", '\uD800', '\uDC00',
  'nn.Sequential(', 'class', 'class A(nn.Module', 'def', '(', ')', ':', 'model =', 'model = nn.Sequential()', 'model = Net()',
  'import torch.nn as nn\nmodel = nn.Sequential()', 'import torch.nn as nn\nmodel = nn.Sequential(nn.Linear())',
  'import torch.nn as nn\nclass N(nn.Module):\n    def __init__(self):\n        self.l = nn.Linear(*a, **k)\nm = N(**{})',
  'from torch import nn\nmodel = nn.Sequential(nn.Linear(4, 4))\nBATCH_SIZE = 0', 'from torch import nn\nmodel = nn.Sequential(nn.Linear(4, 4))\nBATCH_SIZE = -1',
];

/** Tiny and degenerate files: empty, a single control character, blank lines by the hundred thousand. */
export function edgeInput(rng: Rng): FuzzInput {
  const roll = rng.int(4);
  if (roll === 0) {
    const unit = rng.pick(['\n', '\r\n', '\0', ' ', '\t', '#\n', '\\\n', 'pass\n', '(', '\uFEFF']);
    return { kind: 'edge:repeated', source: unit.repeat(rng.between(1000, 20_000)) };
  }
  if (roll === 1) return { kind: 'edge:garbage', source: latin1Garbage(rng, rng.between(1, 8000)) };
  if (roll === 2) return { kind: 'edge:random-utf16', source: Array.from({ length: rng.between(1, 5000) }, () => String.fromCharCode(rng.int(0x10000))).join('') };
  return { kind: 'edge:literal', source: rng.pick(EDGE) };
}

/** Characters in `text` until it reaches `size` by repetition of `unit`. */
function repeatTo(unit: string, size: number): string {
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
}

export const BIG_VARIANTS = ['5mb-corpus', '5mb-one-line', '5mb-nul-latin1', 'at-limit-corpus'] as const;

/** Multi-megabyte files: a few per run, each variant once. */
export function bigInput(variant: number, rng: Rng, corpus: readonly CorpusFile[], maxChars: number): FuzzInput {
  const name = BIG_VARIANTS[variant % BIG_VARIANTS.length]!;
  const allCorpus = corpus.map((file) => file.text).join('\n');
  const FIVE_MB = 5 * 1024 * 1024;
  switch (name) {
    case '5mb-corpus':
      return { kind: `big:${name}`, source: repeatTo(allCorpus + '\n', FIVE_MB) };
    case '5mb-one-line':
      return { kind: `big:${name}`, source: `model = nn.Sequential(${repeatTo('nn.Linear(8, 8), ', FIVE_MB)}` };
    case '5mb-nul-latin1':
      return { kind: `big:${name}`, source: repeatTo('\0', FIVE_MB / 2) + latin1Garbage(rng, FIVE_MB / 2) };
    case 'at-limit-corpus':
      // Exactly MAX_SOURCE_CHARS: the largest file analysed whole.
      return { kind: `big:${name}`, source: repeatTo(allCorpus + '\n', maxChars) };
  }
}

/**
 * Edits as an editor sends them: one or two rounds (one `reparse` each), each of one to three
 * changes applied in order. Offsets stay within the text each change applies to.
 */
export function randomEdits(rng: Rng, source: string): TextChange[][] {
  const rounds: TextChange[][] = [];
  let text = source;
  for (let r = rng.between(1, 2); r > 0; r--) {
    const changes: TextChange[] = [];
    for (let c = rng.between(1, 3); c > 0; c--) {
      const offset = rng.int(text.length + 1);
      const length = rng.chance(0.5) ? 0 : rng.int(Math.min(40, text.length - offset) + 1);
      const roll = rng.int(4);
      const inserted = roll === 0 ? '' : roll === 1 ? rng.pick(['a', '(', ')', ':', '\n', ' ', '    ', '"', '1', '.', ',', '#']) : roll === 2 ? nasty(rng) : text.slice(rng.int(text.length + 1)).slice(0, rng.between(1, 80));
      changes.push({ offset, length, text: inserted });
      text = text.slice(0, offset) + inserted + text.slice(offset + length);
    }
    rounds.push(changes);
  }
  return rounds;
}
