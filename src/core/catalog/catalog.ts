import type { Value } from '../analysis/layerCall';
import type { LayerRow, MeasuredLibrary } from '../layerTable/layerTable';

/**
 * Standard architectures by name: the models scripts build with `torchvision.models.resnet50()`,
 * `timm.create_model("xception")` or `BertForMaskedLM.from_pretrained("bert-base-cased")`
 * instead of defining them. Each library's part of the catalog answers a constructor call with a
 * CatalogArchitecture, whose layer table follows the rules of docs/layer-table.md for whatever
 * input the script uses.
 */
export type CatalogLibrary = 'torchvision' | 'timm' | 'transformers';

/** Constructor arguments as the script passes them (`num_classes=10`, `aux_logits=False`); only plain values. */
export type CatalogOptions = Readonly<Record<string, number | string | boolean | null>>;

/** What a model takes per sample: an image (channels, height, width) or a sequence of token ids. */
export interface CatalogInput {
  readonly kind: 'image' | 'tokens';
  /** The per-sample shape the model is usually trained with: [3, 224, 224], [512]. */
  readonly defaultShape: readonly number[];
}

export interface CatalogTable {
  /** The per-sample input shape the rows were worked out for. */
  readonly inputShape: readonly number[];
  /** Rows as docs/layer-table.md defines them: Parameter rows first, then one row per layer call in call order. */
  readonly rows: readonly LayerRow[];
  /** What the user should know about this table (an option that was ignored, an assumption made). */
  readonly notes: readonly string[];
  /**
   * Per-sample shape of the first tensor the model returns (`[1000]` for ImageNet logits,
   * `[seq, vocab]` for an LM head), so a model that uses this one as a part (a backbone) can
   * go on from it. Absent where not worked out.
   */
  readonly output?: readonly number[];
  /** Per-sample shape of a transformers base model's `last_hidden_state` (an image backbone's before its pooling; a text model's per token). */
  readonly lastHiddenState?: readonly number[];
  /** Per-sample shape of a text base model's `pooler_output` (BERT's pooler: the first token through a Linear and tanh), where it has a pooler. */
  readonly pooledOutput?: readonly number[];
  /**
   * What autograd saves for backward in this architecture's forward at this sample, measured
   * with its library (bytes per sample at fp32, parameters excluded): the rows list torch.nn
   * modules, and the library's own layers and functional code save tensors no row shows.
   */
  readonly savedActivations?: {
    readonly bytesPerSample: number;
    readonly source: string;
    readonly library: MeasuredLibrary;
    /** The most bytes per sample its forward holds at once with autograd off (fp32), where measured: see MeasuredActivations. */
    readonly forwardPeakBytesPerSample?: number;
  };
  /**
   * Per-sample shapes of every tensor in the list the model returns, where it returns a list
   * (timm's features_only backbones: one feature map per level), so `backbone(x)[-1]` goes on.
   */
  readonly outputs?: readonly (readonly number[])[];
  /**
   * Per-sample shape of the first tensor each call row received, parallel to `rows` (null for
   * Parameter rows and where unknown), so a layer the script puts in place of one of the
   * architecture's (`model.fc = nn.Linear(2048, 10)`) can be sized on the same input.
   */
  readonly rowInputs?: readonly (readonly number[] | null)[];
}

/** A torch.nn layer with its constructor arguments, as a catalog architecture holds it. */
export interface CatalogLayer {
  readonly type: string;
  readonly args: readonly Value[];
  readonly kwargs: Readonly<Record<string, Value>>;
}

export interface CatalogArchitecture {
  readonly library: CatalogLibrary;
  /** The canonical name: `resnet50`, `xception`, `bert-base-uncased`. */
  readonly name: string;
  /** The class PyTorch prints for the model: `ResNet`, `Xception`, `BertForMaskedLM`. */
  readonly className: string;
  /** `sum(p.numel() for p in model.parameters())` with the options applied. */
  readonly params: number;
  readonly input: CatalogInput;
  /** Where the numbers come from: `torchvision 0.14.1 (generated)`, `published configuration`. */
  readonly source: string;
  /**
   * The layer table for one input sample; throws CatalogInputError where the sample does not fit the model.
   * `decoderTokens`: an encoder-decoder's decoder input length (the script's labels), the encoder's where left out.
   */
  table(sample: readonly number[], options?: { readonly decoderTokens?: number }): CatalogTable;
  /** For a transformers model: its model type and config.json values, for the fine-tuning estimator's shape. */
  readonly hfConfig?: { readonly modelType: string; readonly className: string; readonly configClass?: string; readonly config: Readonly<Record<string, unknown>> };
  /** The torch.nn layer at a module path with its constructor arguments (`fc` -> Linear(2048, 1000)), for scripts that read `model.fc.in_features`. */
  layerAt?(path: string): CatalogLayer | undefined;
  /**
   * The part at a module path (`layer3`, `features`) called on its own with one sample: its rows
   * with paths relative to it, each row's input, and its output. Throws CatalogInputError where
   * the sample does not fit the part, CatalogPartError where the part cannot be run alone.
   */
  partTable?(path: string, sample: readonly number[]): CatalogTable;
  /** What `named_children()` of the module at a path ('' for the model) lists, in PyTorch's order; undefined where the data does not say. */
  childNames?(path: string): readonly string[] | undefined;
}

/** A part of an architecture that cannot be run on its own (it takes several tensors, or the data does not say what it computes). */
export class CatalogPartError extends Error {}

/** An input the architecture cannot take (an image smaller than its downsampling, a sequence past its positions). */
export class CatalogInputError extends Error {}

/** Why a name or an option was not understood: shown to the user as is. */
export interface CatalogMiss {
  readonly miss: string;
}

export function isCatalogMiss(value: CatalogArchitecture | CatalogMiss): value is CatalogMiss {
  return 'miss' in value;
}
