/**
 * The task heads transformers 5.18.0 puts on a decoder-only base model: the causal-LM head of each
 * model file and the generic sequence-classification, token-classification and question-answering
 * classes of modeling_layers.py. GPT-2 and LLaMA build them alike and differ only in names.
 */
import { num, type HfConfig } from '../configs';
import { tokenModel, type ClassSpec, type TokenForward as Forward } from '../modelTypeSpec';
import { linear, plain, userModule } from '../layers';
import type { Module } from '../moduleTree';

export interface DecoderNames {
  /** Class-name prefix: `GPT2`, `Llama`. */
  readonly prefix: string;
  /** The causal-LM class: `GPT2LMHeadModel`, `LlamaForCausalLM`. */
  readonly causalLm: string;
  /** The attribute holding the base model in the LM and classification heads: `transformer`, `model`. */
  readonly base: string;
  /** The config key of the hidden size: `n_embd`, `hidden_size`. */
  readonly hidden: string;
  /** The base model's token embedding, which `tie_word_embeddings` ties the LM head to: `wte`, `embed_tokens`. */
  readonly embedding: string;
  /** Whether the causal-LM head has a bias (Phi's has). */
  readonly lmHeadBias?: boolean;
  /** The attribute of the question-answering class's base model, where it is not `base`. */
  readonly qaBase?: string;
  /** The token classifier's attribute and whether it has a bias. */
  readonly tokenClassifier: (c: HfConfig) => { readonly name: string; readonly bias: boolean };
}

export function decoderHeads(names: DecoderNames, base: (c: HfConfig) => [Module, Forward]): Record<string, ClassSpec> {
  const padNote = `${names.prefix}ForSequenceClassification needs config.pad_token_id for batches larger than 1 (the library raises without one); the table does not depend on it`;
  /** The head's root with the base model added under `attribute`. */
  const withBase = (className: string, c: HfConfig, attribute = names.base): [Module, Module, Forward] => {
    const root = userModule(className);
    const [inner, forward] = base(c);
    root.add(attribute, inner);
    return [root, inner, forward];
  };
  return {
    [names.causalLm]: {
      build(c) {
        const vocab = num(c, 'vocab_size');
        const [root, inner, forward] = withBase(names.causalLm, c);
        const head = root.add('lm_head', linear(num(c, names.hidden), vocab, names.lmHeadBias === true));
        if (c.tie_word_embeddings === true) head.tie('weight', inner.children.find(([n]) => n === names.embedding)![1].get('weight'));
        return tokenModel(root, (trace, t) => {
          forward(trace, t);
          trace.call(head, [t, vocab]);
        });
      },
    },
    [`${names.prefix}ForSequenceClassification`]: {
      build(c) {
        const labels = num(c, 'num_labels');
        const [root, , forward] = withBase(`${names.prefix}ForSequenceClassification`, c);
        const score = root.add('score', linear(num(c, names.hidden), labels, false));
        return tokenModel(
          root,
          (trace, t) => {
            forward(trace, t);
            // score runs on every position; the last token's logits are picked afterwards
            trace.call(score, [t, labels]);
          },
          c.pad_token_id === null ? [padNote] : undefined,
        );
      },
    },
    [`${names.prefix}ForTokenClassification`]: {
      build(c) {
        const d = num(c, names.hidden);
        const labels = num(c, 'num_labels');
        const [root, , forward] = withBase(`${names.prefix}ForTokenClassification`, c);
        const dropout = root.add('dropout', plain('Dropout'));
        const classifier = names.tokenClassifier(c);
        const head = root.add(classifier.name, linear(d, labels, classifier.bias));
        return tokenModel(root, (trace, t) => {
          forward(trace, t);
          trace.call(dropout, [t, d]);
          trace.call(head, [t, labels]);
        });
      },
    },
    [`${names.prefix}ForQuestionAnswering`]: {
      build(c) {
        // The generic QA class keeps its base model as `transformer` unless the model file says otherwise.
        const [root, , forward] = withBase(`${names.prefix}ForQuestionAnswering`, c, names.qaBase ?? 'transformer');
        const qa = root.add('qa_outputs', linear(num(c, names.hidden), 2));
        return tokenModel(root, (trace, t) => {
          forward(trace, t);
          trace.call(qa, [t, 2]);
        });
      },
    },
  };
}

/** The base model class (`GPT2Model`, `LlamaModel`: `${prefix}Model`) and the heads on it. */
export function decoderClasses(names: DecoderNames, base: (c: HfConfig) => [Module, Forward]): Record<string, ClassSpec> {
  return {
    [`${names.prefix}Model`]: {
      build(c) {
        const [root, forward] = base(c);
        return tokenModel(root, forward);
      },
    },
    ...decoderHeads(names, base),
  };
}
