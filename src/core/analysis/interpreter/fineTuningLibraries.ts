import type { SyntaxNode } from '../../parsing/syntax';
import { findCheckpoint, withoutQuantizationSuffix } from '../../catalog/hf/checkpoints';
import { catalogCall } from './catalogCalls';
import type { Evaluator } from './evaluator';
import { asModule, tuple, unresolved, type PyValue } from './pyValues';
import { catalogValue } from './torchModules';

/**
 * Fine-tuning libraries that load the pretrained model themselves, so that the script never calls
 * `from_pretrained`: TRL's trainers given a hub id (`SFTTrainer(model="Qwen/Qwen2.5-0.5B")` loads it
 * with `AutoModelForCausalLM.from_pretrained`), and Unsloth's `FastLanguageModel.from_pretrained`,
 * which returns the model and its tokenizer, and its `get_peft_model`, which wraps the model it is given.
 * Their settings (4-bit loading, LoRA rank, checkpointing) are read in fineTuningSetup.ts.
 */
export const TRL_TRAINER = /^trl(\.\w+)*\.\w+Trainer$/;
export const UNSLOTH_LOAD = /^unsloth(\.\w+)*\.Fast\w*Model\.from_pretrained$/;
export const UNSLOTH_PEFT = /^unsloth(\.\w+)*\.Fast\w*Model\.get_peft_model$/;

/** An Unsloth call as scripts write it: `FastLanguageModel.from_pretrained`. */
export const unslothName = (qualified: string): string => qualified.split('.').slice(-2).join('.');

/**
 * The catalog's name for an Unsloth mirror (`unsloth/llama-3-8b-bnb-4bit` is Meta's Llama 3 8B,
 * stored in 4 bits: findCheckpoint's mirror rule); for one the catalog lacks, its name without the
 * organisation and the quantization suffix, whose size tag the assumed shape reads.
 */
export function unslothBaseId(id: string): string {
  if (!/^unsloth\//i.test(id)) return id;
  return findCheckpoint(id)?.name ?? withoutQuantizationSuffix(id.replace(/^unsloth\//i, '')).replace(/-unsloth$/i, '');
}

/** The TRL trainers the fine-tuning model counts beyond a supervised step (preferenceSetup.ts reads them), without the `Trainer` suffix. */
export const PREFERENCE_TRAINERS = ['DPO', 'KTO', 'ORPO', 'CPO', 'GRPO'] as const;

/** What a TRL trainer other than SFT, the preference trainers (DPO, KTO, ORPO, CPO) and GRPO (fineTuning.ts's `preference`) holds beyond one supervised step. */
const PREFERENCE_EXTRAS: Readonly<Record<string, string>> = {
  PPOTrainer: 'PPO also holds a value model, a reward model and a frozen reference copy of the model, and generates',
};

/** The model a hub id names, as `AutoModelForCausalLM.from_pretrained(id)` builds it (a catalog miss is noted and unresolved). */
function pretrained(interp: Evaluator, id: string, node: SyntaxNode): PyValue {
  return catalogValue(interp, catalogCall('transformers.AutoModelForCausalLM.from_pretrained', [unslothBaseId(id)], new Map())!, node);
}

/** The value of one of these libraries' calls, or undefined for any other call (and for a TRL trainer, which stays the trainer it is). */
export function fineTuningLibraryCall(interp: Evaluator, name: string, args: readonly PyValue[], kwargs: ReadonlyMap<string, PyValue>, node: SyntaxNode): PyValue | undefined {
  if (UNSLOTH_LOAD.test(name)) {
    const id = kwargs.get('model_name') ?? args[0];
    if (typeof id !== 'string') {
      const why = 'the model name is not a constant the analysis can read';
      interp.note(node, `${unslothName(name)}(...): ${why}`);
      return tuple([unresolved(node.text, why), unresolved(node.text, why)]);
    }
    const base = unslothBaseId(id);
    interp.note(node, `${unslothName(name)}: the estimate follows transformers' code for ${base} with Unsloth's fused cross-entropy; its own attention and LoRA kernels hold less, so the figure is an upper bound.`);
    const tokenizer = catalogValue(interp, catalogCall('transformers.AutoTokenizer.from_pretrained', [base], new Map())!, node);
    return tuple([pretrained(interp, base, node), tokenizer]);
  }
  if (UNSLOTH_PEFT.test(name)) {
    const model = args[0] ?? kwargs.get('model');
    return model !== undefined && asModule(model) ? model : undefined;
  }
  if (TRL_TRAINER.test(name)) {
    const id = kwargs.get('model') ?? args[0];
    const trainer = name.slice(name.lastIndexOf('.') + 1);
    // The trainer loads a model named by its id; the script holds the trainer, so the model is found here.
    if (typeof id === 'string' && interp.depth === 0 && interp.scriptLevel) {
      // A reward model is a sequence classifier with one output, not a language model.
      const model = trainer === 'RewardTrainer'
        ? catalogValue(interp, catalogCall('transformers.AutoModelForSequenceClassification.from_pretrained', [id], new Map([['num_labels', 1]]))!, node)
        : pretrained(interp, id, node);
      if (asModule(model)) interp.hooks.onAssign?.('model', model, node);
    }
    const counted = ['SFT', 'Reward', ...PREFERENCE_TRAINERS].some((name) => trainer === `${name}Trainer`);
    if (!counted) interp.note(node, `${trainer}: the estimate is of one supervised step of the model; ${PREFERENCE_EXTRAS[trainer] ?? 'this trainer also runs steps the estimate does not model'}.`);
  }
  return undefined;
}
