import { findArchitecture, type CatalogRequest } from '../../catalog/lookup';
import type { CatalogArchitecture, CatalogOptions } from '../../catalog/catalog';
import { isCatalogMiss } from '../../catalog/catalog';
import { isList, isUnresolvedValue, kindOf, unresolved, type ExternalValue, type InstanceValue, type PyValue } from './pyValues';

/**
 * Library constructors of standard architectures, as the interpreter meets them:
 * `torchvision.models.resnet50(num_classes=10)`, `timm.create_model("xception")`,
 * `BertForMaskedLM.from_pretrained("bert-base-cased")`, `GPT2LMHeadModel(GPT2Config(n_layer=6))`.
 * The catalog (src/core/catalog) answers with the architecture; this module turns the call's
 * values into a catalog request and says what it could not read.
 */
export type CatalogCall =
  | { readonly architecture: CatalogArchitecture; readonly unread: readonly string[] }
  | { readonly miss: string }
  | { readonly config: InstanceValue }
  | { readonly library: ExternalValue };

const TORCHVISION = /^torchvision\.models\.(?:(?:resnet|vgg|densenet|inception|googlenet|mobilenet|mobilenetv2|mobilenetv3|efficientnet|squeezenet|shufflenetv2|convnext|vision_transformer|swin_transformer|alexnet|regnet|mnasnet)\.)?([a-z][a-z0-9_]*)$/;
/** `torchvision.models.detection.fasterrcnn_resnet50_fpn`: builders of the detection subpackage (classes such as FasterRCNN are not). */
const TORCHVISION_DETECTION = /^torchvision\.models\.detection\.(?:faster_rcnn\.)?([a-z][a-z0-9_]*)$/;
const TORCHVISION_NOT_MODELS = new Set(['get_weight', 'list_models', 'get_model_weights', 'get_model_builder']);
const TIMM = /^timm(\.models)?\.create_model$/;
// A data collator (`DataCollatorForLanguageModeling`) has "Model" in its name but builds no model.
const TRANSFORMERS_MODEL = /^transformers(?:\.models\.[a-z0-9_]+(?:\.modeling_[a-z0-9_]+)?)?\.((?!DataCollator)[A-Z][A-Za-z0-9]*(?:Model|ForMaskedLM|ForCausalLM|ForSequenceClassification|ForTokenClassification|ForQuestionAnswering|ForPreTraining|ForConditionalGeneration|ForImageClassification|ForMultipleChoice|ForNextSentencePrediction|LMHeadModel|ForSeq2SeqLM|ForMaskedImageModeling)[A-Za-z0-9]*)(?:\.(from_pretrained|from_config))?$/;
const TRANSFORMERS_TOKENIZER = /^transformers\.([A-Z][A-Za-z0-9]*(?:Tokenizer|TokenizerFast|Processor|ImageProcessor|FeatureExtractor))\.from_pretrained$/;
const TRANSFORMERS_CONFIG = /^transformers(?:\.models\.[a-z0-9_]+(?:\.configuration_[a-z0-9_]+)?)?\.([A-Z][A-Za-z0-9]*Config)(?:\.(from_pretrained))?$/;
/** Where a config instance keeps the checkpoint it was loaded from. */
const CHECKPOINT = '__checkpoint__';
/** Keyword arguments of `from_pretrained` that load or place weights and change no layer. */
const LOADING_OPTIONS = new Set(['cache_dir', 'revision', 'torch_dtype', 'device_map', 'low_cpu_mem_usage', 'trust_remote_code', 'local_files_only', 'use_auth_token', 'token', 'force_download', 'resume_download', 'proxies', 'output_loading_info', 'ignore_mismatched_sizes', 'attn_implementation', 'use_safetensors', 'from_tf', 'from_flax', 'load_in_8bit', 'load_in_4bit', 'quantization_config', 'subfolder', 'mirror', 'state_dict', 'return_dict']);

/** Keyword arguments of a model's constructor or from_pretrained the catalog is not given; it reads ignore_mismatched_sizes (without it, a new label count on a checkpoint's head raises). */
const MODEL_CALL_IGNORED = new Set([...LOADING_OPTIONS, 'config', 'pretrained_model_name_or_path'].filter((name) => name !== 'ignore_mismatched_sizes'));

/** The catalog's answer to a library call, or undefined when the call builds no standard architecture. */
export function catalogCall(qualified: string, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>): CatalogCall | undefined {
  const detection = TORCHVISION_DETECTION.exec(qualified);
  if (detection) {
    const options = readOptions(kwargs, new Set());
    return answer({ library: 'torchvision', name: `detection.${detection[1]!}`, options: options.values }, options.unread);
  }
  const torchvision = TORCHVISION.exec(qualified);
  if (torchvision && !TORCHVISION_NOT_MODELS.has(torchvision[1]!)) {
    const name = torchvision[1] === 'get_model' ? args[0] : torchvision[1];
    if (typeof name !== 'string') return { miss: `${qualified}(...): the model name is not a constant the analysis can read` };
    const options = readOptions(kwargs, new Set());
    return answer({ library: 'torchvision', name, options: options.values }, options.unread);
  }
  if (TIMM.test(qualified)) {
    const name = kwargs.get('model_name') ?? args[0];
    if (typeof name !== 'string') return { miss: 'timm.create_model(...): the model name is not a constant the analysis can read' };
    const options = readOptions(kwargs, new Set(['model_name', 'checkpoint_path', 'pretrained_cfg', 'pretrained_cfg_overlay', 'scriptable', 'exportable', 'no_jit']));
    return answer({ library: 'timm', name: name.replace(/^timm\//, ''), options: options.values }, options.unread);
  }
  // A tokenizer stays a library value, so that calling it (`tokenizer(texts, max_length=128)`) is seen as a library call.
  const tokenizer = TRANSFORMERS_TOKENIZER.exec(qualified);
  if (tokenizer) {
    const checkpoint = kwargs.get('pretrained_model_name_or_path') ?? args[0];
    const name = `transformers.${tokenizer[1]!}`;
    // Only a tokenizer has a vocabulary; it remembers its checkpoint for `tokenizer.vocab_size` and `len(tokenizer)`.
    if (!/Tokenizer(Fast)?$/.test(name)) return { library: { kind: 'external', name } };
    return { library: { kind: 'external', name, tokenizer: typeof checkpoint === 'string' ? { checkpoint } : {} } };
  }
  const config = TRANSFORMERS_CONFIG.exec(qualified);
  if (config) {
    const options = readOptions(kwargs, LOADING_OPTIONS);
    const attrs = new Map<string, PyValue>(Object.entries(options.values));
    const checkpoint = config[2] === 'from_pretrained' ? (kwargs.get('pretrained_model_name_or_path') ?? args[0]) : undefined;
    if (config[2] === 'from_pretrained' && typeof checkpoint !== 'string') return { miss: `${config[1]}.from_pretrained(...): the checkpoint name is not a constant the analysis can read` };
    if (typeof checkpoint === 'string') attrs.set(CHECKPOINT, checkpoint);
    for (const name of options.unread) attrs.set(name, unresolved(name, 'not a constant'));
    return { config: { kind: 'instance', className: config[1]!, attrs } };
  }
  const model = TRANSFORMERS_MODEL.exec(qualified);
  if (model) {
    const className = model[1]!;
    const how = model[2];
    const options = readOptions(kwargs, MODEL_CALL_IGNORED);
    const configValue = kwargs.get('config') ?? (how === 'from_pretrained' ? undefined : args[0]);
    const fromConfig = configValue !== undefined ? configOptions(configValue) : undefined;
    if (configValue !== undefined && !fromConfig) return { miss: `${className}(...): its config is not a value the analysis can read` };
    const checkpoint = how === 'from_pretrained' ? (kwargs.get('pretrained_model_name_or_path') ?? args[0]) : fromConfig?.checkpoint;
    if (how === 'from_pretrained' && typeof checkpoint !== 'string') return { miss: `${className}.from_pretrained(...): the checkpoint name is not a constant the analysis can read` };
    if (!how && configValue === undefined) return { miss: `${className}(...) needs a config to be sized` };
    return answer(
      {
        library: 'transformers',
        className,
        ...(typeof checkpoint === 'string' ? { checkpoint } : {}),
        ...(fromConfig?.configClass ? { configClass: fromConfig.configClass } : {}),
        ...(fromConfig ? { config: fromConfig.values } : {}),
        options: options.values,
      },
      [...options.unread, ...(fromConfig?.unread ?? [])],
    );
  }
  return undefined;
}

function answer(request: CatalogRequest, unread: readonly string[]): CatalogCall {
  const found = findArchitecture(request);
  return isCatalogMiss(found) ? found : { architecture: found, unread };
}

/** Plain values of keyword arguments; library values (`weights=ResNet50_Weights.DEFAULT`) as their names. */
function readOptions(kwargs: ReadonlyMap<string, PyValue>, ignored: ReadonlySet<string>): { values: CatalogOptions; unread: string[] } {
  const values: Record<string, number | string | boolean | null> = {};
  const unread: string[] = [];
  for (const [name, value] of kwargs) {
    if (ignored.has(name)) continue;
    const plain = plainOption(value);
    if (plain === undefined) unread.push(name);
    else values[name] = plain;
  }
  return { values, unread };
}

function plainOption(value: PyValue): number | string | boolean | null | undefined {
  if (value === null || typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
  if (kindOf(value) === 'external' && (value as ExternalValue).self === undefined) return (value as ExternalValue).name;
  return undefined;
}

/** A `*Config(...)` or `AutoConfig.from_pretrained(...)` value: its checkpoint and the options set on it. */
function configOptions(value: PyValue): { checkpoint?: string; configClass?: string; values: CatalogOptions; unread: string[] } | undefined {
  if (kindOf(value) !== 'instance' || !/Config$/.test((value as InstanceValue).className)) return undefined;
  const values: Record<string, number | string | boolean | null> = {};
  const unread: string[] = [];
  let checkpoint: string | undefined;
  for (const [name, option] of (value as InstanceValue).attrs) {
    if (name === CHECKPOINT) {
      if (typeof option === 'string') checkpoint = option;
      continue;
    }
    const plain = isList(option) || isUnresolvedValue(option) ? undefined : plainOption(option);
    if (plain === undefined) unread.push(name);
    else values[name] = plain;
  }
  const className = (value as InstanceValue).className;
  return { ...(checkpoint ? { checkpoint } : {}), ...(className !== 'AutoConfig' && className !== 'PretrainedConfig' ? { configClass: className } : {}), values, unread };
}
