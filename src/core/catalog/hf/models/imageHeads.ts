/**
 * The image-classification head ViT, Swin and CLIP put on their vision model alike: the backbone
 * under one attribute and a `classifier` Linear on its pooled features, an `nn.Identity` with
 * num_labels=0.
 */
import type { BuiltModel, ForwardInput } from '../modelTypeSpec';
import { linear, plain, userModule } from '../layers';
import type { Module, Trace } from '../moduleTree';

export function imageClassification(
  className: string,
  attribute: string,
  [backbone, forward]: [Module, (trace: Trace, input: ForwardInput) => void],
  features: number,
  labels: number,
): BuiltModel {
  const root = userModule(className);
  root.add(attribute, backbone);
  const classifier = root.add('classifier', labels > 0 ? linear(features, labels) : plain('Identity'));
  return {
    root,
    forward: (trace, input) => {
      forward(trace, input);
      trace.call(classifier, [labels > 0 ? labels : features]);
    },
  };
}
