/** Embedding and EmbeddingBag: lookup tables indexed by integer tensors. */
import type { LayerSpec } from './layerSpec';
import { fail, inputAt, type LayerSpecGroup } from './shapes';
import { formatShape, isBatchDim, type TensorShape } from './tensorShape';

// Embedding(num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
// scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False): indices of any shape S
// give S + (embedding_dim,). Backward needs the indices (int64), which it keeps.
const embedding: LayerSpec = {
  category: 'embedding',
  params: (args) => args.count(0, 'num_embeddings') * args.count(1, 'embedding_dim'),
  forward: (inputs, args) => [...inputAt(inputs, 0, args.type), args.count(1, 'embedding_dim')],
  savesInput: true,
  savesOutput: false,
};

// EmbeddingBag(num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
// mode='mean', sparse=False, _weight=None, include_last_offset=False, padding_idx=None);
// forward(input, offsets=None, per_sample_weights=None): a 2-D (bags, n) input, or a 1-D input
// cut into bags by a 1-D `offsets` (the second input).
const embeddingBag: LayerSpec = {
  category: 'embedding',
  params: (args) => args.count(0, 'num_embeddings') * args.count(1, 'embedding_dim'),
  forward(inputs, args): TensorShape {
    const input = inputAt(inputs, 0, args.type);
    const dim = args.count(1, 'embedding_dim');
    const mode = args.string(5, 'mode', 'mean');
    if (!['sum', 'mean', 'max'].includes(mode)) fail(`${args.type}: mode should be 'sum', 'mean' or 'max', not '${mode}'`);
    const offsets = inputs[1];
    if (input.length === 2) {
      if (offsets) fail(`${args.type}: offsets must be None for a 2-D input ${formatShape(input)}`);
      return [input[0]!, dim];
    }
    if (input.length !== 1) fail(`${args.type} expects a 1-D or 2-D input of indices, got ${formatShape(input)}`);
    if (!offsets) fail(`${args.type} needs offsets (its second input) for a 1-D input`);
    if (offsets.length !== 1) fail(`${args.type}: offsets should be 1-D, got ${formatShape(offsets)}`);
    const count = offsets[0]!;
    if (!args.bool(8, 'include_last_offset', false)) return [count, dim];
    if (isBatchDim(count)) fail(`${args.type}: with include_last_offset the number of bags is the batch minus one, which is not a shape`);
    return [count - 1, dim];
  },
  savesInput: true,
  savesOutput: false,
};

export const embeddingLayers: LayerSpecGroup = {
  Embedding: embedding,
  EmbeddingBag: embeddingBag,
};
