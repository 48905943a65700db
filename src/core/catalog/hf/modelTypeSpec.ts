/** What each covered model type provides: its classes, how each is built, and how forward runs. */
import type { HfConfig, ModelType } from './configs';
import type { Module, Trace } from './moduleTree';

/** One forward pass's input, per sample. */
export interface ForwardInput {
  /** Token ids: the sequence length (CLIPModel: the text's, beside the image). */
  readonly tokens?: number;
  /** Encoder-decoder models: the decoder's sequence length. */
  readonly decoderTokens?: number;
  /** Images: channels, height, width. */
  readonly image?: readonly [number, number, number];
  /** ViT's, Swin's and CLIP's forward(interpolate_pos_encoding=True). */
  readonly interpolatePosEncoding?: boolean;
}

/** A model built from a resolved config: its module tree and its forward pass. */
export interface BuiltModel {
  readonly root: Module;
  /** Records the layer calls of `model(input)` in train mode; the input was checked against its ModelTypeSpec. */
  forward(trace: Trace, input: ForwardInput): void;
  /** What the user should know about this model's table. */
  readonly notes?: readonly string[];
}

/** The forward pass of a model that takes token ids: `t` is the sequence length. */
export type TokenForward = (trace: Trace, t: number) => void;

/** A model whose forward takes token ids, with the notes its table comes with. */
export function tokenModel(root: Module, forward: TokenForward, notes?: string[]): BuiltModel {
  return { root, forward: (trace, input) => forward(trace, input.tokens!), ...(notes ? { notes } : {}) };
}

/** Keyword arguments of the model class's constructor (`add_pooling_layer=False`). */
export type ModelKwargs = Readonly<Record<string, boolean>>;

export interface ClassSpec {
  /** Constructor keyword arguments the class takes besides the config, with their defaults. */
  readonly kwargs?: Readonly<Record<string, boolean>>;
  /** A config this class cannot be built with (QA heads need num_labels == 2...), or undefined. */
  readonly refuse?: (config: HfConfig) => string | undefined;
  /** The class's input where it is not its type's (CLIPTextModel takes tokens, its type images). */
  readonly input?: 'tokens' | 'image';
  /** Image classes whose forward also takes token ids (CLIPModel): `textLength` of them, the type's maxTokens when not given. */
  readonly withText?: boolean;
  build(config: HfConfig, kwargs: ModelKwargs): BuiltModel;
}

/** How an image model checks its input. */
export interface ImageInputSpec {
  /** The channels the model takes (num_channels). */
  channels(config: HfConfig): number;
  /** Why an image of this size cannot run as the library runs it, if it cannot. */
  refuse(config: HfConfig, height: number, width: number, interpolatePosEncoding: boolean): string | undefined;
}

export interface ModelTypeSpec {
  readonly modelType: ModelType;
  readonly input: 'tokens' | 'image' | 'seq2seq';
  /** The concrete classes, in the order they are listed. */
  readonly classes: Readonly<Record<string, ClassSpec>>;
  /** The input size the model (this class) is usually used with. */
  defaultShape(config: HfConfig, className: string): number[];
  /** Image types: how the image is checked. */
  readonly image?: ImageInputSpec;
  /** The longest sequence the model takes, if it has a limit. */
  maxTokens?(config: HfConfig): number;
  /** Encoder-decoder types: whether the class's forward takes decoder tokens of their own length (`decoderLength`). */
  hasDecoder?(className: string): boolean;
}
