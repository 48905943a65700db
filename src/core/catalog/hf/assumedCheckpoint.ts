/**
 * A checkpoint the catalog does not know, given a shape assumed from its name: the size tag
 * (`-7b`, `13B`, `1.5B`, `360M`) gives the parameter count, a family word (llama, mistral, qwen,
 * gemma...) the catalog member whose shape it has: one of the same size tag as it is (a fine-tune
 * keeps its base's shape), else the one nearest in size, its config scaled to the count: heads (and
 * so the width) by the cube root of the size ratio, then as many layers as make up the count. Mixture-of-experts names (`8x7B`, `-A2.7B`,
 * `moe`) and the encoder families (BERT, T5...) are declined: their size says nothing of a
 * Llama-style shape.
 */
import { CHECKPOINTS, closest, type Checkpoint } from './checkpoints';
import type { ConfigValue } from './configKit';
import { isLlamaStyle } from './llamaStyle';

/** Names that are not decoders of the Llama kind: their size tag does not make a Llama-style shape. */
const NOT_DECODER = /(^|[^a-z])(t5|mt5|t0|bert|bart|mbart|deberta|electra|roberta|xlnet|albert|vit|clip|siglip|whisper|wav2vec|hubert|swin|pegasus|marian|sentence|e5|bge|gte|minilm|mpnet|longformer|bigbird|led)([^a-z]|$)/;
/** Mixture-of-experts names: another estimator's work. */
const MIXTURE = /(\d+x\d+(\.\d+)?[bm])|(^|[^a-z])moe([^a-z]|$)|mixtral|-a\d+(\.\d+)?b([^a-z0-9]|$)/;

/**
 * Family words and the catalog members whose proportions (and vocabulary, which dominates the
 * logits of small models) they keep, most specific first; a name with none takes every Llama.
 */
const FAMILIES: ReadonlyArray<{ readonly word: RegExp; readonly members: RegExp; readonly modelType: string; readonly label: string }> = [
  // Mistral's models since Nemo (2407) have the 131072-entry Tekken vocabulary, the earlier 7B ones 32000 or 32768.
  { word: /ministral|mistral-(nemo|small)|nemo|mistral.*-2[4-9][01]\d(?!\d)/, members: /nemo|small|ministral/i, modelType: 'mistral', label: 'Mistral (Tekken vocabulary)' },
  { word: /mistral|zephyr|openhermes/, members: /./, modelType: 'mistral', label: 'Mistral' },
  // Qwen3's dense models (not Qwen3.5's hybrid attention, nor the -A3B mixtures, declined above).
  { word: /qwen-?3(?![\d.])/, members: /./, modelType: 'qwen3', label: 'Qwen3' },
  { word: /qwen/, members: /./, modelType: 'qwen2', label: 'Qwen2' },
  // The families modelled on their own tree: an unknown member scales the catalogued one nearest in size.
  { word: /gemma-?2(?![\da-z.])/, members: /./, modelType: 'gemma2', label: 'Gemma-2' },
  { word: /gemma/, members: /./, modelType: 'gemma', label: 'Gemma' },
  // Phi-4 keeps its 100352-entry vocabulary, Phi-3 and 3.5 their 32064.
  { word: /phi-?4/, members: /phi-4/i, modelType: 'phi3', label: 'Phi-4' },
  { word: /phi-?3/, members: /phi-3/i, modelType: 'phi3', label: 'Phi-3' },
  { word: /pythia|neox/, members: /./, modelType: 'gpt_neox', label: 'GPT-NeoX' },
  { word: /olmo-?2(?![\da-z.])/, members: /./, modelType: 'olmo2', label: 'OLMo-2' },
  { word: /olmo/, members: /./, modelType: 'olmo', label: 'OLMo' },
  { word: /llama-?3(?!\d)/, members: /llama-3(?!\d)/i, modelType: 'llama', label: 'Llama 3' },
  { word: /codellama|code-llama/, members: /codellama/i, modelType: 'llama', label: 'Code Llama' },
  // Llama 2's fine-tunes keep its 32000-entry vocabulary (Code Llama's has 16 entries more).
  // LLaMA's first 7B and 13B (`huggyllama/llama-7b`) have Llama 2's shapes.
  { word: /llama-?2(?!\d)|(^|[^a-z])llama-(7|13|33|65)b|tinyllama|vicuna|alpaca|wizardlm|guanaco|orca/, members: /llama-2(?!\d)|tinyllama/i, modelType: 'llama', label: 'Llama 2' },
  { word: /smollm/, members: /smollm/i, modelType: 'llama', label: 'SmolLM' },
  // Granite 3's dense decoders (Granite 4's hybrids are another architecture).
  { word: /granite-?3(?![\d])/, members: /./, modelType: 'granite', label: 'Granite 3' },
  { word: /(^|[^a-z])yi-/, members: /yi-/i, modelType: 'llama', label: 'Yi' },
];

/** Families people fine-tune whose own architecture the assumed shape does not follow (a Llama-style decoder of their size stands in). */
const OTHER_DECODERS = /phi|falcon|opt|bloom|gpt|mpt|stablelm|starcoder|deepseek|internlm|baichuan|chatglm|granite|cohere|command|jamba|dbrx/;

/** The parameter count a model id's size tag gives (`Llama-2-7b-hf` -> 7e9, `bloom-7b1` -> 7.1e9, `SmolLM2-360M` -> 3.6e8), or why there is none. */
export function sizeFromName(name: string): { readonly params: number; readonly tag: string } | { readonly declined: string } | undefined {
  const lower = name.toLowerCase();
  const short = lower.split('/').pop() ?? lower;
  if (MIXTURE.test(short)) return { declined: `'${name}' names a mixture-of-experts model, whose size does not give a dense shape` };
  const match = /(?:^|[^a-z0-9.])(\d+(?:\.\d+)?)([bm])(\d)?(?![a-z0-9])/.exec(short);
  if (!match) return phiTier(short);
  const digits = match[3] ? `${match[1]}.${match[3]}` : match[1]!;
  const value = Number(digits) * (match[2] === 'b' ? 1e9 : 1e6);
  if (!Number.isFinite(value) || value < 1e7) return undefined;
  return { params: value, tag: `${match[1]}${match[2]!.toUpperCase()}${match[3] ?? ''}` };
}

/** Microsoft's Phi names give a tier, not a size: their model cards publish mini 3.8B, small 7B, medium 14B, and Phi-4 14B. */
function phiTier(short: string): { readonly params: number; readonly tag: string } | undefined {
  if (!/(^|[^a-z])phi-?[34]/.test(short)) return undefined;
  if (/mini/.test(short)) return { params: 3.8e9, tag: 'mini (3.8B)' };
  if (/small/.test(short)) return { params: 7e9, tag: 'small (7B)' };
  if (/medium|(^|[^a-z])phi-?4(?![.\d])/.test(short)) return { params: 14e9, tag: /medium/.test(short) ? 'medium (14B)' : 'Phi-4 (14B)' };
  return undefined;
}

/**
 * Parameters of a decoder config of the kinds scaled here (embeddings, attention with its biases where
 * the type has them, the MLP, norms, an untied head): LLaMA's layout, with Gemma-2's four norms a layer,
 * OLMo's norms without weights, OLMo-2's and Qwen3's query and key norms, and GPT-NeoX's biased 4h MLP and LayerNorms.
 */
export function llamaStyleParams(modelType: string, config: Readonly<Record<string, ConfigValue | undefined>>): number {
  const n = (key: string) => (typeof config[key] === 'number' ? config[key] : 0);
  const h = n('hidden_size');
  const i = n('intermediate_size');
  const heads = n('num_attention_heads');
  const kvHeads = n('num_key_value_heads') || heads;
  const headDim = n('head_dim') || h / heads;
  const q = heads * headDim;
  const kv = kvHeads * headDim;
  const neox = modelType === 'gpt_neox';
  const attentionBias = modelType === 'qwen2' || config.attention_bias === true || (neox && config.attention_bias !== false) ? q + 2 * kv + (neox ? h : 0) : 0;
  // GPT-NeoX: two linears with biases and LayerNorms (weight and bias); the others a gated MLP and RMS norms.
  const mlp = neox ? 2 * h * i + i + h : 3 * h * i;
  const normsPerLayer = neox ? 4 * h : modelType === 'gemma2' ? 4 * h : modelType === 'olmo' ? 0 : modelType === 'olmo2' ? 2 * h + q + kv : modelType === 'qwen3' ? 2 * h + 2 * headDim : 2 * h;
  const finalNorm = neox ? 2 * h : modelType === 'olmo' ? 0 : h;
  const perLayer = h * (q + 2 * kv) + q * h + attentionBias + mlp + normsPerLayer;
  const tied = typeof config.tie_word_embeddings === 'boolean' ? config.tie_word_embeddings : /^gemma/.test(modelType);
  return n('vocab_size') * h * (tied ? 1 : 2) + n('num_hidden_layers') * perLayer + finalNorm;
}

/** The largest divisor of `n` not above `most` (at least 1): key-value heads must divide the heads. */
function divisorAtMost(n: number, most: number): number {
  for (let d = Math.max(1, Math.min(n, most)); d > 1; d--) if (n % d === 0) return d;
  return 1;
}

/** `reference`'s config scaled to `params`: heads by the cube root of the size ratio at the reference's width per head, the MLP at its ratio, then the layers that make up the count. */
export function scaledConfig(reference: Checkpoint, params: number): Record<string, ConfigValue> {
  const c = reference.config;
  const num = (key: string) => c[key] as number;
  const refParams = llamaStyleParams(reference.modelType, c);
  const scale = Math.cbrt(params / refParams);
  const heads = Math.max(1, Math.round(num('num_attention_heads') * scale));
  const perHead = num('hidden_size') / num('num_attention_heads');
  const hidden = Math.max(1, Math.round(perHead)) * heads;
  const kvShare = (typeof c.num_key_value_heads === 'number' ? num('num_key_value_heads') : num('num_attention_heads')) / num('num_attention_heads');
  const kvHeads = divisorAtMost(heads, Math.max(1, Math.round(heads * kvShare)));
  const intermediate = Math.max(64, Math.round((num('intermediate_size') / num('hidden_size')) * hidden / 64) * 64);
  // GPT-NeoX has no key-value heads of its own (its config takes no such field).
  const shaped: Record<string, ConfigValue> = { ...c, hidden_size: hidden, num_attention_heads: heads, ...(reference.modelType === 'gpt_neox' ? {} : { num_key_value_heads: kvHeads }), intermediate_size: intermediate, num_hidden_layers: 1 };
  const oneLayer = llamaStyleParams(reference.modelType, shaped);
  const twoLayers = llamaStyleParams(reference.modelType, { ...shaped, num_hidden_layers: 2 });
  const perLayer = twoLayers - oneLayer;
  shaped.num_hidden_layers = Math.max(1, Math.round((params - (oneLayer - perLayer)) / perLayer));
  return shaped;
}

/** The model types whose configs are scaled here: LLaMA-style ones and the decoders whose fields are named as theirs are. */
const SCALED_TYPES = new Set(['gemma2', 'phi3', 'gpt_neox', 'olmo', 'olmo2', 'qwen3']);

/** The catalog members that give a family its proportions (the scaled types only: their config's fields are the ones scaled). */
function membersOf(modelType: string, members: RegExp): Checkpoint[] {
  return CHECKPOINTS.filter((c) => c.modelType === modelType && (isLlamaStyle(c.modelType) || SCALED_TYPES.has(c.modelType)) && members.test(c.name));
}

/** The member nearest in size to `params` (by the ratio of counts), leaving out the names in `except` (to measure the fallback on catalogued models). */
export function nearestMember(modelType: string, members: RegExp, params: number, except: readonly string[] = []): Checkpoint | undefined {
  let best: { checkpoint: Checkpoint; distance: number } | undefined;
  for (const checkpoint of membersOf(modelType, members)) {
    if (except.includes(checkpoint.name)) continue;
    const distance = Math.abs(Math.log(llamaStyleParams(checkpoint.modelType, checkpoint.config) / params));
    if (!best || distance < best.distance) best = { checkpoint, distance };
  }
  return best?.checkpoint;
}

/** The words of a name, without its organisation and size tag (to tell apart members of one size: `vicuna-7b` shares `llama` with Llama-2-7b, not with CodeLlama-7b). */
const nameWords = (name: string) => new Set(name.toLowerCase().replace(/^[\w.-]+\//, '').split(/[^a-z0-9]+/).filter((w) => w && !/^\d+(\.\d+)?[bm]\d?$/.test(w)));

/**
 * The member whose own name carries the same size tag as `name` (Llama-3.3-70B and Llama-3.1-70B,
 * vicuna-7b and Llama-2-7b): a fine-tune or a sibling of the same nominal size has that member's
 * shape, where scaling to the round figure of the tag would add or drop a layer. Of several, the one
 * whose name shares most words with `name`.
 */
function sameSizeMember(name: string, modelType: string, members: RegExp, params: number, except: readonly string[]): Checkpoint | undefined {
  const words = nameWords(name.replace(/^.*\//, ''));
  const shared = (c: Checkpoint) => [...nameWords(c.name)].filter((w) => words.has(w)).length;
  const same = membersOf(modelType, members).filter((c) => !except.includes(c.name) && [c.name, ...c.aliases].some((n) => {
    const size = sizeFromName(n);
    return size !== undefined && 'params' in size && size.params === params;
  }));
  return same.sort((a, b) => shared(b) - shared(a))[0];
}

const formatCount = (params: number) => (params >= 1e9 ? `${Number((params / 1e9).toPrecision(3))}B` : `${Number((params / 1e6).toPrecision(3))}M`);

/**
 * A checkpoint for a name the catalog does not know, with its shape assumed from the name (or
 * from `params` where the caller knows the count), and the note that says so; or why there is
 * none. `except` leaves catalog members out of the references (the fallback's own evaluation).
 */
export function assumedCheckpoint(name: string, options: { readonly params?: number; readonly except?: readonly string[] } = {}): (Checkpoint & { readonly assumed: string }) | { readonly declined: string } {
  const lower = name.toLowerCase();
  const size = sizeFromName(name);
  if (size && 'declined' in size) return size;
  if (NOT_DECODER.test(lower.split('/').pop() ?? lower)) return { declined: `'${name}' is not a decoder whose shape its size gives` };
  const params = options.params ?? size?.params;
  if (params === undefined || !(params > 0)) return { declined: `'${name}' carries no size (such as -7b or 1.5B) to assume a shape from` };
  const family = FAMILIES.find((f) => f.word.test(lower));
  const except = options.except ?? [];
  // A member of the name's own size is taken as it is; only a size the catalog lacks is scaled to.
  const sameSize = options.params === undefined && family ? sameSizeMember(name, family.modelType, family.members, params, except) : undefined;
  // A family with no member left (the fallback's evaluation leaves some out) takes every member of its type.
  const reference = sameSize ?? (family && nearestMember(family.modelType, family.members, params, except)) ?? nearestMember(family?.modelType ?? 'llama', /./, params, except);
  if (!reference) return { declined: `no catalog member to take the proportions of for '${name}'` };
  const config = sameSize ? { ...sameSize.config } : scaledConfig(reference, params);
  const other = family ? undefined : OTHER_DECODERS.exec(lower)?.[0];
  const names = CHECKPOINTS.flatMap((c) => [c.name, ...c.aliases]);
  const suggestions = closest(name, names);
  const shape = `hidden ${String(config.hidden_size)}, ${String(config.num_hidden_layers)} layers, ${String(config.num_attention_heads)} heads (${String(config.num_key_value_heads)} key-value), MLP ${String(config.intermediate_size)}, vocabulary ${String(config.vocab_size)}`;
  const assumed =
    `The transformers catalog does not know the checkpoint '${name}'; its shape is assumed from ` +
    (options.params !== undefined ? `its stated size (${formatCount(params)})` : `the size in its name (${size!.tag})`) +
    `${sameSize ? ' with the shape of' : ' with the proportions of'} ${reference.name}${sameSize ? ', a catalogued model of that size' : ''}${other ? ` (its own ${other} architecture is not modelled: a ${family?.label ?? 'Llama'}-style decoder of that size stands in)` : ''}: ${shape}. ` +
    'The estimate is approximate; to pin the shape, name a catalog checkpoint of the same architecture (where the id comes from a variable or an argument: the CLI\'s --set NAME=checkpoint or the gpuEstimator.assume setting)' +
    (suggestions.length > 0 ? `, e.g. ${suggestions.map((s) => `'${s}'`).join(', ')}` : '') +
    '.';
  return { name, aliases: [], modelType: reference.modelType, config, source: `assumed from the name, ${sameSize ? 'the shape of' : 'scaled from'} ${reference.name} (${reference.source})`, assumed };
}
