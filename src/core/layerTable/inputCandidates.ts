/**
 * The sample shapes a model's forward is tried with when the script calls it with none the
 * analysis can see: the script's own suggestions (example tensors, datasets), a standard
 * architecture's usual input, then what the model's first layer declares (docs/layer-table.md).
 */
import type { ModelDescription, Sourced, TrainingSetup } from '../analysis/modelDescription';
import { kindOf, type DictValue, type InstanceValue, type ModuleObject, type PyValue } from '../analysis/interpreter/pyValues';
import { positiveInteger } from '../analysis/callArguments';
import { SEQUENCE_NAMES, SET_BY_THE_USER } from '../analysis/trainingSetup';
import { LayerArgs } from '../layers/layerArgs';
import type { SourceRange } from '../parsing/syntax';

/** Tokens per sample for a model fed token ids when the script names no length: the CPU dry run's fake batches hold as many. */
export const ASSUMED_SEQUENCE_LENGTH = 128;

/** The side of the images a model whose first layer is a Conv2d takes when the script names none: ImageNet's crop. */
export const ASSUMED_IMAGE_SIDE = 224;

/**
 * The sample shapes to try: the script's suggestions, then what the first layer declares. An
 * `assumed` one (no size in the script) is kept only where the whole forward takes it.
 */
export type InputCandidate = Sourced<readonly number[]> & { readonly seqFirst?: boolean; readonly assumed?: boolean };

export function inputCandidates(model: ModelDescription, setup: TrainingSetup): InputCandidate[] {
  const candidates: InputCandidate[] = [...setup.inputCandidates];
  // A pretrained model held whole by the script's module (a LightningModule's `self.model`) takes the same samples.
  const architecture = model.root.catalog?.architecture ?? heldPretrained(model.root)?.catalog?.architecture;
  if (architecture) {
    const image = setup.imageSize?.value;
    const sequence = setup.sequenceLength?.value;
    const channels = architecture.input.defaultShape[0] ?? 3;
    if (architecture.input.kind === 'image' && image && setup.imageSize) candidates.push({ value: [channels, image, image], range: setup.imageSize.range, origin: setup.imageSize.origin });
    if (architecture.input.kind === 'tokens' && sequence && setup.sequenceLength) candidates.push({ value: [sequence], range: setup.sequenceLength.range, origin: setup.sequenceLength.origin });
    candidates.push({ value: [...architecture.input.defaultShape], range: model.range, origin: `the usual input of ${architecture.name}` });
    return candidates;
  }
  const first = firstLayer(model.root);
  if (first?.layer) {
    const args = new LayerArgs(first.layer);
    // A sequence built from a length constant may be fed (batch, seq) or (seq, batch): try both
    // where the model has recurrent layers, and keep the layout its layers accept.
    const recurrent = hasSequenceLayers(model.root);
    const attempt = (shape: () => number[], said: { range: SourceRange; origin: string; assumed?: boolean } = { range: first.range, origin: `the first layer (nn.${first.className})` }) => {
      try {
        const value = shape();
        candidates.push({ value, ...said });
        if (recurrent && first.className !== 'Linear') candidates.push({ value, ...said, origin: `${said.origin}, sequence first`, seqFirst: true });
      } catch {
        // The first layer does not say; the remaining candidates decide.
      }
    };
    const sequence = setup.sequenceLength?.value;
    if (first.className === 'Linear') attempt(() => [args.int(0, 'in_features')]);
    if (first.className === 'Embedding' || first.className === 'EmbeddingBag') {
      // Token ids, as many as the script's length, else the length the model was built for; with neither, as many as the dry run's fake batches hold, said so.
      const length = setup.sequenceLength ?? modelSequenceLength(model.root, first.range);
      attempt(
        () => [length?.value ?? ASSUMED_SEQUENCE_LENGTH],
        length
          ? { range: shownAt(length, first), origin: `${length.value} tokens into nn.${first.className}: ${length.origin}` }
          : { range: first.range, origin: `${ASSUMED_SEQUENCE_LENGTH} tokens into nn.${first.className}, assumed: the script names no sequence length (pin it with --set seq_len=N)`, assumed: true },
      );
    }
    if (/^(LSTM|GRU|RNN)$/.test(first.className) && sequence) attempt(() => [sequence, args.int(0, 'input_size')]);
    if (first.className === 'Conv2d') {
      // Square images of the script's side; with none named, ImageNet's crop, said so, where the whole forward takes it.
      const side = setup.imageSize;
      const value = side?.value ?? ASSUMED_IMAGE_SIDE;
      attempt(
        () => [args.int(0, 'in_channels'), value, value],
        side
          ? { range: shownAt(side, first), origin: `${value} x ${value} images into nn.Conv2d: ${side.origin}` }
          : { range: first.range, origin: `${value} x ${value} images into nn.Conv2d, assumed: the script names no image size (pin it with --set image_size=N)`, assumed: true },
      );
    }
  }
  return candidates;
}

/** The pretrained model a module of the script holds before any layer of its own (a LightningModule's `self.model`, a backbone under the script's head): it takes the script's samples. */
export function heldPretrained(root: ModuleObject): ModuleObject | undefined {
  // A module of the script's, or `nn.Sequential(backbone, head)`.
  if (!(root.kind === 'user' && root.classValue) && root.kind !== 'sequential') return undefined;
  // The pretrained model comes first (a backbone, then the script's head on its output: `self.bert`, then `self.out`).
  const first = root.namedModules().find(([, m]) => m.catalog?.path === '' || declaresInput(m))?.[1];
  return first?.catalog?.path === '' ? first : undefined;
}

function hasSequenceLayers(root: ModuleObject): boolean {
  const layers = root.kind === 'layer' ? [root] : root.namedModules().map(([, m]) => m);
  return layers.some((m) => m.layer && /^(LSTM|GRU|RNN|Transformer.*|MultiheadAttention)$/.test(m.className));
}

const declaresInput = (m: ModuleObject) => m.kind === 'layer' && /^(Linear|Conv[123]d|Embedding|EmbeddingBag|LSTM|GRU|RNN)$/.test(m.className);

/** The first layer that declares the size of its input (activations and norms do not). */
function firstLayer(root: ModuleObject): ModuleObject | undefined {
  if (declaresInput(root)) return root;
  return root.namedModules().find(([, m]) => declaresInput(m))?.[1];
}

/**
 * The length the model was built for, when the script names none of its own: an attribute of the
 * model (`self.max_seq_len = max_seq_len` from a config's `**cfg["model"]`), or of the config or
 * hyperparameters it keeps (`self.config.block_size`, Lightning's `self.hparams.block_size`).
 */
function modelSequenceLength(root: ModuleObject, range: SourceRange): Sourced<number> | undefined {
  const lengthIn = (attrs: ReadonlyMap<string, PyValue>, owner: string): Sourced<number> | undefined => {
    for (const [name, value] of attrs) {
      const length = SEQUENCE_NAMES.test(name) ? positiveInteger(value) : undefined;
      if (length) return { value: length, range, origin: `${owner}.${name}, the length ${root.className} is built for` };
    }
    return undefined;
  };
  const own = lengthIn(root.attrs, 'self');
  if (own) return own;
  for (const [name, value] of root.attrs) {
    const kind = kindOf(value);
    const held = kind === 'instance' ? (value as InstanceValue).attrs : kind === 'dict' ? (value as DictValue).entries : undefined;
    const found = held && lengthIn(held, `self.${name}`);
    if (found) return found;
  }
  return undefined;
}

/** Where a size read for the first layer is shown: its own line, or the layer's for one the user set (`--set seq_len=N`), which has none. */
function shownAt(size: Sourced<number>, first: ModuleObject): SourceRange {
  return size.origin.startsWith(SET_BY_THE_USER) ? first.range : size.range;
}
