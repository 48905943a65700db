/**
 * The Hugging Face transformers part of the catalog: `BertForMaskedLM.from_pretrained("bert-base-cased")`,
 * `AutoModelForSequenceClassification.from_pretrained("roberta-base", num_labels=3)`,
 * `GPT2LMHeadModel(GPT2Config(n_layer=6))`, `LlamaForCausalLM(LlamaConfig(...))` answered with the
 * model's parameter count and its layer table (docs/layer-table.md) as harness/layer_table.py
 * records it with transformers 5.18.0, for any sequence length (or image size). The library is not
 * needed: module trees and forward passes are written out from its modeling code
 * (docs/catalog-transformers.md says what is covered and where every number comes from).
 */
import type { LayerRow } from '../../layerTable/layerTable';
import {
  CatalogInputError,
  type CatalogArchitecture,
  type CatalogMiss,
  type CatalogOptions,
  type CatalogTable,
} from '../catalog';
import { assumedCheckpoint } from './assumedCheckpoint';
import { findPipeline } from '../diffusers/pipelines';
import { CHECKPOINTS, closest, findCheckpoint, type Checkpoint } from './checkpoints';
import { SCHEMAS, modelWidth, num, type HfConfig, type ModelType } from './configs';
import { ConfigBuilder, formatValue } from './configKit';
import type { ModelTypeSpec, ForwardInput } from './modelTypeSpec';
import { bertTypeSpec, robertaTypeSpec } from './models/bert';
import { distilbertTypeSpec } from './models/distilbert';
import { gpt2TypeSpec } from './models/gpt2';
import { LLAMA_STYLE_SPECS } from './models/llama';
import { optTypeSpec } from './models/opt';
import { debertaV2TypeSpec } from './models/deberta';
import { bloomTypeSpec } from './models/bloom';
import { gptNeoTypeSpec } from './models/gptNeo';
import { electraTypeSpec } from './models/electra';
import { gptjTypeSpec } from './models/gptj';
import { bartTypeSpec } from './models/bart';
import { albertTypeSpec } from './models/albert';
import { phiTypeSpec } from './models/phi';
import { LLAMA_STYLE, LLAMA_STYLE_TYPES, isLlamaStyle } from './llamaStyle';
import { t5TypeSpec } from './models/t5';
import { vitTypeSpec } from './models/vit';
import { falconCallsAttentionDropout, falconTypeSpec } from './models/falcon';
import { swinTypeSpec } from './models/swin';
import { convnextTypeSpec } from './models/convnext';
import { resnetTypeSpec } from './models/resnet';
import { dinov2TypeSpec } from './models/dinov2';
import { clipTypeSpec } from './models/clip';
import { xlnetTypeSpec } from './models/xlnet';
import { mixtralTypeSpec, qwen2MoeTypeSpec, qwen3MoeTypeSpec } from './models/moe';
import { gemma3TypeSpec } from './models/gemma3';
import { gemma2TypeSpec, gemma3TextTypeSpec, olmo2TypeSpec, olmoTypeSpec, qwen3TypeSpec } from './models/llamaVariants';
import { phi3TypeSpec } from './models/phi3';
import { gptNeoxTypeSpec } from './models/gptNeox';
import { countParams, layerRows, Trace } from './moduleTree';
import { measuredSavedActivations } from '../savedActivations';

/** The transformers version whose modeling code the tables follow (and the generator checked them against). */
export const TRANSFORMERS_VERSION = '5.18.0';

export interface TransformersRequest {
  /** `BertForMaskedLM`, `AutoModelForSequenceClassification`. */
  readonly className: string;
  /** `bert-base-cased`, `openai-community/gpt2`: from `from_pretrained`, or the config's own `from_pretrained`. */
  readonly checkpoint?: string;
  /** `GPT2Config` when the model is built from a config object of that class (needed by Auto classes without a checkpoint). */
  readonly configClass?: string;
  /** Arguments of the config object (`GPT2Config(n_layer=6)`); applied after the checkpoint's config.json. */
  readonly config?: CatalogOptions;
  /** Keyword arguments of the model call (`from_pretrained(name, num_labels=3)`, `BertModel(config, add_pooling_layer=False)`); applied last. */
  readonly options?: CatalogOptions;
  /** Encoder-decoder models: the decoder's sequence length; the encoder's when left out. */
  readonly decoderLength?: number;
  /** ViT, Swin, CLIP: forward is called with interpolate_pos_encoding=True, so other image sizes run. */
  readonly interpolatePosEncoding?: boolean;
  /** CLIPModel: the text's sequence length beside the image; the text config's max_position_embeddings when left out. */
  readonly textLength?: number;
}

const TYPE_SPECS: Readonly<Record<ModelType, ModelTypeSpec>> = {
  bert: bertTypeSpec,
  roberta: robertaTypeSpec,
  distilbert: distilbertTypeSpec,
  gpt2: gpt2TypeSpec,
  xlnet: xlnetTypeSpec,
  t5: t5TypeSpec,
  vit: vitTypeSpec,
  phi: phiTypeSpec,
  opt: optTypeSpec,
  'deberta-v2': debertaV2TypeSpec,
  bloom: bloomTypeSpec,
  gpt_neo: gptNeoTypeSpec,
  electra: electraTypeSpec,
  gptj: gptjTypeSpec,
  bart: bartTypeSpec,
  albert: albertTypeSpec,
  falcon: falconTypeSpec,
  swin: swinTypeSpec,
  clip: clipTypeSpec,
  mixtral: mixtralTypeSpec,
  qwen2_moe: qwen2MoeTypeSpec,
  qwen3_moe: qwen3MoeTypeSpec,
  gemma2: gemma2TypeSpec,
  phi3: phi3TypeSpec,
  gpt_neox: gptNeoxTypeSpec,
  olmo: olmoTypeSpec,
  olmo2: olmo2TypeSpec,
  qwen3: qwen3TypeSpec,
  gemma3_text: gemma3TextTypeSpec,
  gemma3: gemma3TypeSpec,
  convnext: convnextTypeSpec,
  resnet: resnetTypeSpec,
  dinov2: dinov2TypeSpec,
  ...LLAMA_STYLE_SPECS,
};

/** The Auto classes and what each resolves to for the hand-written model types (transformers 5.18 auto mappings). */
const HAND_AUTO_CLASSES: Readonly<Record<string, Partial<Record<ModelType, string>>>> = {
  AutoModel: {
    bert: 'BertModel', roberta: 'RobertaModel', distilbert: 'DistilBertModel', gpt2: 'GPT2Model', xlnet: 'XLNetModel', t5: 'T5Model',
    vit: 'ViTModel', phi: 'PhiModel', opt: 'OPTModel', 'deberta-v2': 'DebertaV2Model', bloom: 'BloomModel',
    gpt_neo: 'GPTNeoModel', electra: 'ElectraModel', gptj: 'GPTJModel', bart: 'BartModel',
    albert: 'AlbertModel', falcon: 'FalconModel', swin: 'SwinModel', clip: 'CLIPModel',
    mixtral: 'MixtralModel', qwen2_moe: 'Qwen2MoeModel', qwen3_moe: 'Qwen3MoeModel', gemma2: 'Gemma2Model', phi3: 'Phi3Model', gpt_neox: 'GPTNeoXModel',
    olmo: 'OlmoModel', olmo2: 'Olmo2Model', qwen3: 'Qwen3Model', gemma3_text: 'Gemma3TextModel', gemma3: 'Gemma3Model',
    convnext: 'ConvNextModel', resnet: 'ResNetModel', dinov2: 'Dinov2Model',
  },
  AutoModelForCausalLM: {
    bert: 'BertLMHeadModel', roberta: 'RobertaForCausalLM', gpt2: 'GPT2LMHeadModel', xlnet: 'XLNetLMHeadModel', phi: 'PhiForCausalLM',
    opt: 'OPTForCausalLM', bloom: 'BloomForCausalLM', gpt_neo: 'GPTNeoForCausalLM', gptj: 'GPTJForCausalLM', electra: 'ElectraForCausalLM',
    bart: 'BartForCausalLM', falcon: 'FalconForCausalLM', mixtral: 'MixtralForCausalLM', qwen2_moe: 'Qwen2MoeForCausalLM', qwen3_moe: 'Qwen3MoeForCausalLM',
    gemma2: 'Gemma2ForCausalLM', phi3: 'Phi3ForCausalLM', gpt_neox: 'GPTNeoXForCausalLM', olmo: 'OlmoForCausalLM', olmo2: 'Olmo2ForCausalLM',
    qwen3: 'Qwen3ForCausalLM', gemma3_text: 'Gemma3ForCausalLM', gemma3: 'Gemma3ForConditionalGeneration',
  },
  AutoModelForMaskedLM: {
    bert: 'BertForMaskedLM', roberta: 'RobertaForMaskedLM', distilbert: 'DistilBertForMaskedLM', 'deberta-v2': 'DebertaV2ForMaskedLM',
    electra: 'ElectraForMaskedLM', bart: 'BartForConditionalGeneration', albert: 'AlbertForMaskedLM',
  },
  AutoModelForSequenceClassification: {
    bert: 'BertForSequenceClassification', roberta: 'RobertaForSequenceClassification', distilbert: 'DistilBertForSequenceClassification',
    gpt2: 'GPT2ForSequenceClassification', xlnet: 'XLNetForSequenceClassification', t5: 'T5ForSequenceClassification',
    phi: 'PhiForSequenceClassification', opt: 'OPTForSequenceClassification', 'deberta-v2': 'DebertaV2ForSequenceClassification',
    bloom: 'BloomForSequenceClassification', gpt_neo: 'GPTNeoForSequenceClassification',
    electra: 'ElectraForSequenceClassification', gptj: 'GPTJForSequenceClassification', bart: 'BartForSequenceClassification',
    albert: 'AlbertForSequenceClassification', falcon: 'FalconForSequenceClassification',
    mixtral: 'MixtralForSequenceClassification', qwen2_moe: 'Qwen2MoeForSequenceClassification', qwen3_moe: 'Qwen3MoeForSequenceClassification',
    gemma2: 'Gemma2ForSequenceClassification', phi3: 'Phi3ForSequenceClassification', gpt_neox: 'GPTNeoXForSequenceClassification',
    olmo: 'OlmoForSequenceClassification', olmo2: 'Olmo2ForSequenceClassification', qwen3: 'Qwen3ForSequenceClassification',
    gemma3_text: 'Gemma3TextForSequenceClassification',
  },
  AutoModelForTokenClassification: {
    bert: 'BertForTokenClassification', roberta: 'RobertaForTokenClassification', distilbert: 'DistilBertForTokenClassification',
    gpt2: 'GPT2ForTokenClassification', xlnet: 'XLNetForTokenClassification', t5: 'T5ForTokenClassification', phi: 'PhiForTokenClassification',
    'deberta-v2': 'DebertaV2ForTokenClassification', bloom: 'BloomForTokenClassification',
    gpt_neo: 'GPTNeoForTokenClassification', electra: 'ElectraForTokenClassification',
    albert: 'AlbertForTokenClassification', falcon: 'FalconForTokenClassification',
    mixtral: 'MixtralForTokenClassification', qwen2_moe: 'Qwen2MoeForTokenClassification', qwen3_moe: 'Qwen3MoeForTokenClassification',
    gemma2: 'Gemma2ForTokenClassification', phi3: 'Phi3ForTokenClassification', gpt_neox: 'GPTNeoXForTokenClassification',
    qwen3: 'Qwen3ForTokenClassification',
  },
  AutoModelForQuestionAnswering: {
    bert: 'BertForQuestionAnswering', roberta: 'RobertaForQuestionAnswering', distilbert: 'DistilBertForQuestionAnswering',
    gpt2: 'GPT2ForQuestionAnswering', xlnet: 'XLNetForQuestionAnsweringSimple', t5: 'T5ForQuestionAnswering', opt: 'OPTForQuestionAnswering',
    'deberta-v2': 'DebertaV2ForQuestionAnswering', bloom: 'BloomForQuestionAnswering',
    gpt_neo: 'GPTNeoForQuestionAnswering', electra: 'ElectraForQuestionAnswering', gptj: 'GPTJForQuestionAnswering',
    bart: 'BartForQuestionAnswering', albert: 'AlbertForQuestionAnswering', falcon: 'FalconForQuestionAnswering',
    gpt_neox: 'GPTNeoXForQuestionAnswering', qwen3: 'Qwen3ForQuestionAnswering', qwen3_moe: 'Qwen3MoeForQuestionAnswering',
  },
  AutoModelForSeq2SeqLM: { t5: 'T5ForConditionalGeneration', bart: 'BartForConditionalGeneration' },
  AutoModelForImageClassification: {
    vit: 'ViTForImageClassification', swin: 'SwinForImageClassification', clip: 'CLIPForImageClassification',
    convnext: 'ConvNextForImageClassification', resnet: 'ResNetForImageClassification', dinov2: 'Dinov2ForImageClassification',
  },
  AutoModelForZeroShotImageClassification: { clip: 'CLIPModel' },
  AutoModelForPreTraining: {
    bert: 'BertForPreTraining', roberta: 'RobertaForMaskedLM', distilbert: 'DistilBertForMaskedLM', gpt2: 'GPT2LMHeadModel',
    xlnet: 'XLNetLMHeadModel', t5: 'T5ForConditionalGeneration', 'deberta-v2': 'DebertaV2ForMaskedLM',
    bloom: 'BloomForCausalLM', electra: 'ElectraForPreTraining', bart: 'BartForConditionalGeneration',
    albert: 'AlbertForPreTraining',
  },
};

/** The Auto classes and what each resolves to per model type: the LLaMA-style types' mappings as the generator read them. */
export const AUTO_CLASSES: Readonly<Record<string, Partial<Record<ModelType, string>>>> = (() => {
  const merged: Record<string, Partial<Record<ModelType, string>>> = Object.fromEntries(
    Object.entries(HAND_AUTO_CLASSES).map(([auto, byType]) => [auto, { ...byType }]),
  );
  for (const modelType of LLAMA_STYLE_TYPES) {
    for (const [auto, concrete] of Object.entries(LLAMA_STYLE[modelType].auto)) (merged[auto] ??= {})[modelType] = concrete;
  }
  return merged;
})();

/** from_pretrained's loading arguments: they change where weights come from, not the model's shape. */
const LOADING_OPTIONS = new Set([
  'cache_dir', 'revision', 'force_download', 'local_files_only', 'token', 'use_auth_token', 'trust_remote_code', 'device_map',
  'low_cpu_mem_usage', 'ignore_mismatched_sizes', 'output_loading_info', 'use_safetensors', 'subfolder', 'variant', 'from_tf',
  'from_flax', 'resume_download', 'proxies', 'offload_folder', 'offload_state_dict', 'offload_buffers', 'max_memory', 'weights_only',
  'mirror', '_fast_init', 'key_mapping', 'tp_plan', 'tp_size', 'state_dict', 'config', 'pretrained_model_name_or_path', 'local_dir',
]);

const QUANTIZATION_OPTIONS = new Set(['load_in_8bit', 'load_in_4bit', 'quantization_config']);

/** Arguments that leave what the forward pass saves as measured: the head's labels, the weights' dtype (the replay sizes it). */
const SAVED_AS_MEASURED = new Set(['num_labels', 'id2label', 'label2id', 'problem_type', 'torch_dtype', 'dtype', ...LOADING_OPTIONS]);

/**
 * What an image checkpoint's class saves for backward, measured with the library
 * (data/transformersSaved.json), where the script builds it with the checkpoint's own config:
 * any other argument (a dropout rate, eager attention, output_attentions) changes what is saved.
 */
function measuredImageActivations(request: TransformersRequest, resolved: Resolved, input: ForwardInput): CatalogTable['savedActivations'] {
  const checkpoint = resolved.checkpoint;
  if (!checkpoint || checkpoint.assumed || !input.image) return undefined;
  const changed = [...Object.keys(request.config ?? {}), ...Object.keys(request.options ?? {})].filter((key) => !SAVED_AS_MEASURED.has(key));
  if (changed.length > 0) return undefined;
  return measuredSavedActivations('transformers', `${checkpoint.name}:${resolved.className}`, input.image[1], input.image[2]);
}

/**
 * A text base model's `last_hidden_state` (BertModel, DistilBertModel, GPT2Model, LlamaModel...): a
 * vector of the model's width per token, what a head of the script (`outputs.last_hidden_state[:, 0]`)
 * reads. Encoder-decoders return the decoder's, left out.
 */
function textLastHiddenState(typeSpec: ModelTypeSpec, className: string, config: HfConfig, input: ForwardInput): number[] | undefined {
  if (typeSpec.input !== 'tokens' || !/^[A-Za-z0-9]+Model$/.test(className) || input.tokens === undefined) return undefined;
  const width = modelWidth(config);
  return width === undefined ? undefined : [input.tokens, width];
}

/** Model classes of the covered model types that the catalog leaves out, with why. */
const UNCOVERED_CLASSES: Readonly<Record<string, string>> = {
  BertForMultipleChoice: 'it takes (choices, tokens) inputs',
  RobertaForMultipleChoice: 'it takes (choices, tokens) inputs',
  DistilBertForMultipleChoice: 'it takes (choices, tokens) inputs',
  DebertaV2ForMultipleChoice: 'it takes (choices, tokens) inputs',
  ElectraForMultipleChoice: 'it takes (choices, tokens) inputs',
  AlbertForMultipleChoice: 'it takes (choices, tokens) inputs',
  ElectraForCausalLM: 'it is not covered yet',
  XLNetForMultipleChoice: 'it takes (choices, tokens) inputs',
  GPT2DoubleHeadsModel: 'it takes (choices, tokens) inputs',
  XLNetForQuestionAnswering: 'its beam-search answer heads are not covered; XLNetForQuestionAnsweringSimple is',
  T5ForSequenceClassification: 'its forward needs an end-of-sequence token in every input',
  BartForSequenceClassification: 'its forward needs an end-of-sequence token in every input',
  BartForCausalLM: 'it is not covered yet',
  T5ForQuestionAnswering: 'it is not covered yet',
  ViTForMaskedImageModeling: 'it is not covered yet',
  SwinForMaskedImageModeling: 'it is not covered yet',
  SwinBackbone: 'it is not covered yet',
};

/** The model type a concrete class belongs to. */
function typeSpecOfClass(className: string): ModelTypeSpec | undefined {
  return Object.values(TYPE_SPECS).find((typeSpec) => Object.prototype.hasOwnProperty.call(typeSpec.classes, className));
}

function typeSpecOfConfigClass(configClass: string): ModelTypeSpec | undefined {
  const schema = Object.values(SCHEMAS).find((s) => s.configClass === configClass);
  return schema ? TYPE_SPECS[schema.modelType] : undefined;
}

export interface KnownCheckpoint {
  readonly name: string;
  readonly aliases: readonly string[];
  readonly modelType: ModelType;
  readonly source: string;
}

/** The checkpoints the catalog knows, with the other names each goes by. */
export function knownTransformersCheckpoints(): KnownCheckpoint[] {
  return CHECKPOINTS.map(({ name, aliases, modelType, source }) => ({ name, aliases, modelType, source }));
}

/** The model classes the catalog answers, then the Auto classes. */
export function knownTransformersClasses(): { readonly classes: string[]; readonly autoClasses: string[] } {
  return {
    classes: Object.values(TYPE_SPECS).flatMap((typeSpec) => Object.keys(typeSpec.classes)),
    autoClasses: Object.keys(AUTO_CLASSES),
  };
}

function miss(message: string): CatalogMiss {
  return { miss: message };
}

interface Resolved {
  readonly typeSpec: ModelTypeSpec;
  readonly className: string;
  readonly checkpoint?: Checkpoint;
}

function resolveClass(request: TransformersRequest): Resolved | CatalogMiss {
  let checkpoint: Checkpoint | undefined;
  if (request.checkpoint !== undefined) {
    checkpoint = findCheckpoint(request.checkpoint);
    // A decoder the catalog does not know: a shape assumed from its name's size tag and family, with a note saying so.
    if (!checkpoint) {
      const assumed = assumedCheckpoint(request.checkpoint);
      if (!('declined' in assumed)) checkpoint = assumed;
    }
    const pipeline = checkpoint ? undefined : findPipeline(request.checkpoint);
    if (pipeline) {
      return miss(
        `'${request.checkpoint}' is a Stable Diffusion pipeline (${Object.keys(pipeline.components).join(', ')}): the static reading has no estimate for training it; ` +
          'the dry run (--dry-run, or the command "Dry-run on CPU") builds its parts from the catalog\'s configs and runs the script\'s own step',
      );
    }
    if (!checkpoint) {
      const names = CHECKPOINTS.flatMap((c) => [c.name, ...c.aliases]);
      const suggestions = closest(request.checkpoint, names);
      return miss(
        `The transformers catalog does not know the checkpoint '${request.checkpoint}'` +
          (suggestions.length > 0 ? `; did you mean ${suggestions.map((s) => `'${s}'`).join(', ')}?` : ''),
      );
    }
  }
  let configTypeSpec: ModelTypeSpec | undefined;
  if (request.configClass !== undefined && request.configClass !== 'AutoConfig') {
    configTypeSpec = typeSpecOfConfigClass(request.configClass);
    if (!configTypeSpec) return miss(`The transformers catalog does not cover ${request.configClass}`);
  }
  const knownTypeSpec = checkpoint ? TYPE_SPECS[checkpoint.modelType] : configTypeSpec;
  if (checkpoint && configTypeSpec && configTypeSpec.modelType !== checkpoint.modelType) {
    return miss(`${request.configClass} does not go with '${checkpoint.name}', a ${checkpoint.modelType} checkpoint`);
  }

  const auto = AUTO_CLASSES[request.className];
  if (auto) {
    if (!knownTypeSpec) return miss(`${request.className} needs a checkpoint or a config class to know which model to build`);
    const concrete = auto[knownTypeSpec.modelType];
    if (!concrete) return miss(`${request.className} has no class for ${knownTypeSpec.modelType} models`);
    if (!Object.prototype.hasOwnProperty.call(knownTypeSpec.classes, concrete)) {
      return miss(`${request.className} builds ${concrete} for ${knownTypeSpec.modelType} models, which the catalog does not cover${uncoveredWhy(concrete)}`);
    }
    return { typeSpec: knownTypeSpec, className: concrete, ...(checkpoint ? { checkpoint } : {}) };
  }

  const typeSpec = typeSpecOfClass(request.className);
  if (!typeSpec) {
    if (UNCOVERED_CLASSES[request.className]) return miss(`The transformers catalog does not cover ${request.className}${uncoveredWhy(request.className)}`);
    const { classes, autoClasses } = knownTransformersClasses();
    const suggestions = closest(request.className, [...classes, ...autoClasses]);
    return miss(
      `The transformers catalog does not know the class ${request.className}` +
        (suggestions.length > 0 ? `; did you mean ${suggestions.join(', ')}?` : ''),
    );
  }
  if (knownTypeSpec && knownTypeSpec.modelType !== typeSpec.modelType) {
    const what = checkpoint ? `'${checkpoint.name}' is a ${checkpoint.modelType} checkpoint` : `${request.configClass} is a ${knownTypeSpec.modelType} config`;
    return miss(`${request.className} is a ${typeSpec.modelType} class, but ${what}`);
  }
  return { typeSpec, className: request.className, ...(checkpoint ? { checkpoint } : {}) };
}

function uncoveredWhy(className: string): string {
  const why = UNCOVERED_CLASSES[className];
  return why ? ` (${why})` : '';
}

/** What the request's call builds: the resolved config, the model class's keyword arguments, notes. */
function resolveConfig(request: TransformersRequest, resolved: Resolved): { config: HfConfig; kwargs: Record<string, boolean>; notes: string[] } | CatalogMiss {
  const schema = SCHEMAS[resolved.typeSpec.modelType];
  const spec = resolved.typeSpec.classes[resolved.className]!;
  const builder = new ConfigBuilder(schema);
  const notes: string[] = [];
  for (const [key, value] of Object.entries(resolved.checkpoint?.config ?? {})) {
    const message = builder.set(key, value, 'the checkpoint');
    if (message) throw new Error(`checkpoints.json: ${resolved.checkpoint!.name}: ${message}`);
  }
  for (const [key, value] of Object.entries(request.config ?? {})) {
    const message = builder.set(key, value, 'the config');
    if (message) return miss(message);
  }
  if (resolved.checkpoint?.assumed) notes.push(resolved.checkpoint.assumed);
  const kwargs: Record<string, boolean> = { ...(spec.kwargs ?? {}) };
  const options = request.options ?? {};
  for (const [key, value] of Object.entries(options)) {
    if (spec.kwargs && Object.prototype.hasOwnProperty.call(spec.kwargs, key)) {
      if (typeof value !== 'boolean') return miss(`${resolved.className}: ${key}=${formatValue(value)} should be True or False`);
      kwargs[key] = value;
      continue;
    }
    if (QUANTIZATION_OPTIONS.has(key)) {
      if (value === false || value === null) continue;
      return miss(`${key}: quantized loading (bitsandbytes layers) is not covered by the transformers catalog`);
    }
    if (LOADING_OPTIONS.has(key)) continue;
    const message = builder.set(key, value, 'the call');
    if (message) return miss(message);
  }
  const finished = builder.finish();
  if ('miss' in finished) return finished;
  const config = finished.config;
  const refused = spec.refuse?.(config);
  if (refused) return miss(refused);

  const presetLabels = resolved.checkpoint?.config.num_labels;
  const hasLabelHead = /ForSequenceClassification|ForTokenClassification|ForImageClassification/.test(resolved.className);
  if (hasLabelHead && typeof presetLabels === 'number' && config.num_labels !== presetLabels && options.ignore_mismatched_sizes !== true) {
    notes.push(
      `'${resolved.checkpoint!.name}' has a ${presetLabels}-label head: from_pretrained with num_labels=${String(config.num_labels)} needs ignore_mismatched_sizes=True`,
    );
  }
  const eagerGpt2Dropout = resolved.typeSpec.modelType === 'gpt2' && config.attn_implementation === 'eager' && config.reorder_and_upcast_attn === true;
  const eagerFalconDropout = resolved.typeSpec.modelType === 'falcon' && falconCallsAttentionDropout(config);
  if (config.attn_implementation !== null && resolved.typeSpec.modelType !== 'xlnet' && !eagerGpt2Dropout && !eagerFalconDropout) {
    notes.push(
      `attn_implementation='${String(config.attn_implementation)}' changes how attention is computed, not the rows: ` +
        `in transformers ${TRANSFORMERS_VERSION} attention scores and their dropout are functions, not modules`,
    );
  }
  if (resolved.typeSpec.modelType === 't5' && (request.config?.tie_word_embeddings === false || options.tie_word_embeddings === false)) {
    notes.push(
      `T5Config ties the LM head to the shared embedding in transformers ${TRANSFORMERS_VERSION} whatever tie_word_embeddings says; ` +
        'False only stops the output scaling',
    );
  }
  return { config, kwargs, notes };
}

function modelName(request: TransformersRequest, resolved: Resolved): string {
  if (resolved.checkpoint) return resolved.checkpoint.name;
  const configClass = SCHEMAS[resolved.typeSpec.modelType].configClass;
  const args = Object.entries(request.config ?? {}).map(([key, value]) => `${key}=${formatValue(value)}`);
  return `${configClass}(${args.join(', ')})`;
}

/**
 * The concrete class, model type and resolved config a request builds (what the library's
 * `config` would hold), or why there is none; transformersArchitecture's first half.
 */
export function resolveTransformersRequest(
  request: TransformersRequest,
): { readonly className: string; readonly modelType: ModelType; readonly config: HfConfig } | CatalogMiss {
  const resolved = resolveClass(request);
  if ('miss' in resolved) return resolved;
  const resolvedConfig = resolveConfig(request, resolved);
  if ('miss' in resolvedConfig) return resolvedConfig;
  return { className: resolved.className, modelType: resolved.typeSpec.modelType, config: resolvedConfig.config };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1;
}

/**
 * The catalog's answer for a transformers model built as the request says, or why there is none.
 */
export function transformersArchitecture(request: TransformersRequest): CatalogArchitecture | CatalogMiss {
  const resolved = resolveClass(request);
  if ('miss' in resolved) return resolved;
  const resolvedConfig = resolveConfig(request, resolved);
  if ('miss' in resolvedConfig) return resolvedConfig;
  const { config, kwargs, notes } = resolvedConfig;
  const { typeSpec, className } = resolved;
  const spec = typeSpec.classes[className]!;
  if (request.decoderLength !== undefined && !isCount(request.decoderLength)) {
    return miss(`decoder length ${String(request.decoderLength)} should be a positive int`);
  }
  if (request.textLength !== undefined && !isCount(request.textLength)) {
    return miss(`text length ${String(request.textLength)} should be a positive int`);
  }
  const built = spec.build(config, kwargs);
  const params = countParams(built.root);
  const name = modelName(request, resolved);
  const source =
    `transformers ${TRANSFORMERS_VERSION} modeling code; ` +
    (resolved.checkpoint ? (resolved.checkpoint.assumed ? `a shape ${resolved.checkpoint.source}` : `config.json of ${resolved.checkpoint.name} (${resolved.checkpoint.source})`) : `${SCHEMAS[typeSpec.modelType].configClass} defaults`);
  const defaultShape = typeSpec.defaultShape(config, className);
  const isImage = (spec.input ?? typeSpec.input) === 'image';

  return {
    library: 'transformers',
    name,
    className,
    params,
    input: { kind: isImage ? 'image' : 'tokens', defaultShape },
    source,
    hfConfig: { modelType: typeSpec.modelType, className, configClass: SCHEMAS[typeSpec.modelType].configClass, config },
    table(sample: readonly number[], options: { readonly decoderTokens?: number } = {}): CatalogTable {
      const tableNotes = [...notes, ...(built.notes ?? [])];
      const decoderLength = request.decoderLength ?? options.decoderTokens;
      const input = checkInput(sample, { ...request, ...(decoderLength === undefined ? {} : { decoderLength }) }, typeSpec, className, config, name, tableNotes);
      // A fresh model per table: tied parameters are counted per table.
      const model = spec.build(config, kwargs);
      const trace = new Trace();
      model.forward(trace, input);
      const rows: LayerRow[] = layerRows(model.root, trace);
      const saved = isImage ? measuredImageActivations(request, resolved, input) : undefined;
      const lastCallShape = (keep: (row: LayerRow) => boolean) => rows.filter((row) => row.type !== 'Parameter' && row.outputShape !== null && keep(row)).at(-1)?.outputShape;
      // An image model's main output (its logits, or a base model's pooled output) is its last call's: what `.logits` and `.pooler_output` give the script's code after it.
      const output = isImage ? lastCallShape(() => true) : undefined;
      const hidden = trace.lastHiddenState ?? textLastHiddenState(typeSpec, className, config, input);
      // A text base model's pooler (BertModel's `pooler.dense` and `pooler.activation`, ALBERT's `pooler` and `pooler_activation`): its last call.
      const pooled = !isImage && hidden ? lastCallShape((row) => row.path.startsWith('pooler')) : undefined;
      return {
        inputShape: [...sample], rows, notes: tableNotes, ...(saved ? { savedActivations: saved } : {}), ...(output ? { output } : {}),
        ...(hidden ? { lastHiddenState: hidden } : {}), ...(pooled ? { pooledOutput: pooled } : {}),
      };
    },
  };
}

function checkInput(
  sample: readonly number[],
  request: TransformersRequest,
  typeSpec: ModelTypeSpec,
  className: string,
  config: HfConfig,
  name: string,
  notes: string[],
): ForwardInput {
  const spec = typeSpec.classes[className]!;
  const limit = typeSpec.maxTokens?.(config);
  if ((spec.input ?? typeSpec.input) === 'image') {
    if (sample.length !== 3 || !sample.every(isCount)) {
      throw new CatalogInputError(`${name} takes images as (channels, height, width); got ${JSON.stringify(sample)}`);
    }
    const [channels, height, width] = sample as [number, number, number];
    const expectedChannels = typeSpec.image!.channels(config);
    if (channels !== expectedChannels) {
      throw new CatalogInputError(`${name} takes ${expectedChannels}-channel images (num_channels), not ${channels}-channel ones`);
    }
    const interpolate = request.interpolatePosEncoding === true;
    const refused = typeSpec.image!.refuse(config, height, width, interpolate);
    if (refused) throw new CatalogInputError(`${name}: ${refused}`);
    const input: ForwardInput = { image: [channels, height, width], interpolatePosEncoding: interpolate };
    if (spec.withText !== true) return input;
    const text = request.textLength ?? limit!;
    if (text > limit!) throw new CatalogInputError(`${name} takes at most ${limit!} text tokens (max_position_embeddings); a text of ${text} does not fit`);
    if (request.textLength === undefined) notes.push(`The text is taken as ${text} tokens (max_position_embeddings: what CLIP's processor pads to with padding="max_length")`);
    return { ...input, tokens: text };
  }
  if (sample.length !== 1 || !isCount(sample[0])) {
    throw new CatalogInputError(`${name} takes a sequence of token ids per sample, [sequence length]; got ${JSON.stringify(sample)}`);
  }
  const tokens = sample[0];
  if (limit !== undefined && tokens > limit) {
    const why = typeSpec.modelType === 'roberta' ? 'its positions start after the padding index' : 'max_position_embeddings';
    throw new CatalogInputError(`${name} takes at most ${limit} tokens (${why}); a sequence of ${tokens} does not fit`);
  }
  if (isLlamaStyle(typeSpec.modelType) && tokens > num(config, 'max_position_embeddings')) {
    notes.push(
      `${tokens} tokens is past max_position_embeddings (${num(config, 'max_position_embeddings')}): ` +
        'rotary positions still run, the model was not trained that long',
    );
  }
  if (typeSpec.hasDecoder?.(className) === true) {
    const decoder = request.decoderLength ?? tokens;
    if (limit !== undefined && decoder > limit) throw new CatalogInputError(`${name} takes at most ${limit} decoder tokens; a decoder input of ${decoder} does not fit`);
    if (request.decoderLength === undefined) notes.push(`The decoder input is taken as long as the encoder input (${tokens} tokens)`);
    return { tokens, decoderTokens: decoder };
  }
  return { tokens };
}
