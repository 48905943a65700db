/**
 * The token-classification and question-answering heads encoder models put on their base model
 * alike (DeBERTa-v2, ELECTRA): `dropout` and `classifier` on every token, or `qa_outputs` split
 * into start and end logits (so it needs num_labels=2).
 */
import { num, type HfConfig } from '../configs';
import { tokenModel, type ClassSpec, type TokenForward as Forward } from '../modelTypeSpec';
import { linear, plain } from '../layers';
import type { Module } from '../moduleTree';

/** The head's root with the base model added, and the base model's forward. */
export type WithBase = (className: string, c: HfConfig) => [Module, Forward, ...unknown[]];

export function tokenAndQaHeads(prefix: string, withBase: WithBase): Record<string, ClassSpec> {
  return {
    [`${prefix}ForTokenClassification`]: {
      build(c) {
        const d = num(c, 'hidden_size');
        const labels = num(c, 'num_labels');
        const [root, forward] = withBase(`${prefix}ForTokenClassification`, c);
        const dropout = root.add('dropout', plain('Dropout'));
        const classifier = root.add('classifier', linear(d, labels));
        return tokenModel(root, (trace, t) => {
          forward(trace, t);
          trace.call(dropout, [t, d]);
          trace.call(classifier, [t, labels]);
        });
      },
    },
    [`${prefix}ForQuestionAnswering`]: {
      refuse: (c) =>
        c.num_labels === 2 ? undefined : `${prefix}ForQuestionAnswering splits its logits into start and end: it needs num_labels=2, not ${String(c.num_labels)}`,
      build(c) {
        const [root, forward] = withBase(`${prefix}ForQuestionAnswering`, c);
        const qa = root.add('qa_outputs', linear(num(c, 'hidden_size'), 2));
        return tokenModel(root, (trace, t) => {
          forward(trace, t);
          trace.call(qa, [t, 2]);
        });
      },
    },
  };
}
