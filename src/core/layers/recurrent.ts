/** RNN, LSTM, GRU and their single-step cells. */
import type { LayerArgs } from './layerArgs';
import type { LayerSpec } from './layerSpec';
import { checkFeatures } from './linear';
import { fail, inputAt, withLast, type LayerSpecGroup } from './shapes';
import { formatShape, type LayerOutput, type TensorShape } from './tensorShape';

type Mode = 'RNN' | 'LSTM' | 'GRU';

/** Gate rows per hidden unit in the stacked weight matrices. */
const GATES: Readonly<Record<Mode, number>> = { RNN: 1, LSTM: 4, GRU: 3 };

interface RnnConfig {
  readonly inputSize: number;
  readonly hidden: number;
  readonly layers: number;
  readonly bias: boolean;
  readonly batchFirst: boolean;
  readonly directions: number;
  /** LSTM's proj_size; 0 for none. */
  readonly proj: number;
}

/**
 * RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False,
 * dropout=0.0, bidirectional=False); LSTM(input_size, hidden_size, num_layers=1, bias=True,
 * batch_first=False, dropout=0.0, bidirectional=False, proj_size=0); GRU as LSTM without proj_size.
 * (PyTorch 2 reads RNN's fourth positional argument as nonlinearity.)
 */
function rnnConfig(args: LayerArgs, mode: Mode): RnnConfig {
  const s = mode === 'RNN' ? 1 : 0;
  const config = {
    inputSize: args.count(0, 'input_size'),
    hidden: args.positive(1, 'hidden_size'),
    layers: args.positive(2, 'num_layers', 1),
    bias: args.bool(3 + s, 'bias', true),
    batchFirst: args.bool(4 + s, 'batch_first', false),
    directions: args.bool(6 + s, 'bidirectional', false) ? 2 : 1,
    proj: mode === 'LSTM' ? args.int(7, 'proj_size', 0) : 0,
  };
  if (mode !== 'LSTM' && args.has(-1, 'proj_size')) fail(`${args.type}: proj_size is only supported for LSTM`);
  if (mode === 'RNN' && !['tanh', 'relu'].includes(args.string(3, 'nonlinearity', 'tanh'))) fail(`${args.type}: nonlinearity should be 'tanh' or 'relu'`);
  if (config.proj < 0 || (config.proj > 0 && config.proj >= config.hidden)) fail(`${args.type}: proj_size (${config.proj}) must be between 0 and hidden_size (${config.hidden})`);
  return config;
}

function rnnParams(config: RnnConfig, mode: Mode): number {
  const gate = GATES[mode] * config.hidden;
  const out = config.proj || config.hidden;
  // Per direction: w_ih (gate x layer input), w_hh (gate x out), b_ih and b_hh, w_hr (proj x hidden).
  const perDirection = (layerInput: number) => gate * layerInput + gate * out + (config.bias ? 2 * gate : 0) + (config.proj ? config.proj * config.hidden : 0);
  // The first layer reads the input; the others read the previous layer's output, both directions.
  return config.directions * (perDirection(config.inputSize) + (config.layers - 1) * perDirection(out * config.directions));
}

function rnnForward(inputs: readonly TensorShape[], args: LayerArgs, mode: Mode): LayerOutput {
  const config = rnnConfig(args, mode);
  const input = inputAt(inputs, 0, args.type);
  if (input.length !== 2 && input.length !== 3) {
    fail(`${args.type} expects a 2-D (L, H_in) or 3-D (${config.batchFirst ? 'N, L' : 'L, N'}, H_in) input, got ${formatShape(input)}`);
  }
  checkFeatures(input, config.inputSize, args.type);
  const out = config.proj || config.hidden;
  const output = withLast(input, config.directions * out);
  const stacked = config.directions * config.layers;
  // h_n and c_n are (D * num_layers, N, H) whatever batch_first says; unbatched, (D * num_layers, H).
  const batch = input.length === 3 ? [input[config.batchFirst ? 0 : 1]!] : [];
  const h = [stacked, ...batch, out];
  if (mode !== 'LSTM') return [output, h];
  return [output, [h, [stacked, ...batch, config.hidden]]];
}

function recurrent(mode: Mode): LayerSpec {
  return {
    category: 'recurrent',
    params: (args) => rnnParams(rnnConfig(args, mode), mode),
    forward: (inputs, args) => rnnForward(inputs, args, mode),
    // cuDNN keeps the input, the output and a reserve space holding every gate of every step:
    // about one fp32 value per gate per output element for one layer (deeper stacks keep more).
    savesInput: true,
    savesOutput: true,
    extraBytesPerElement: 4 * GATES[mode],
  };
}

// RNNCell(input_size, hidden_size, bias=True, nonlinearity='tanh'); LSTMCell and GRUCell
// (input_size, hidden_size, bias=True). Input (N, H_in) or (H_in); LSTMCell returns (h', c').
function cell(mode: Mode): LayerSpec {
  const gates = GATES[mode];
  return {
    category: 'recurrent',
    params(args) {
      const inputSize = args.count(0, 'input_size');
      const hidden = args.positive(1, 'hidden_size');
      return gates * hidden * (inputSize + hidden) + (args.bool(2, 'bias', true) ? 2 * gates * hidden : 0);
    },
    forward(inputs, args): LayerOutput {
      const input = inputAt(inputs, 0, args.type);
      if (input.length !== 1 && input.length !== 2) fail(`${args.type} expects a 1-D (H_in) or 2-D (N, H_in) input, got ${formatShape(input)}`);
      checkFeatures(input, args.count(0, 'input_size'), args.type);
      const h = withLast(input, args.positive(1, 'hidden_size'));
      return mode === 'LSTM' ? [h, h] : h;
    },
    savesInput: true,
    savesOutput: true,
    extraBytesPerElement: 4 * gates,
  };
}

export const recurrentLayers: LayerSpecGroup = {
  RNN: recurrent('RNN'),
  LSTM: recurrent('LSTM'),
  GRU: recurrent('GRU'),
  RNNCell: cell('RNN'),
  LSTMCell: cell('LSTM'),
  GRUCell: cell('GRU'),
};
