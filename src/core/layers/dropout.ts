/** Every dropout variant: the input's shape, and a mask kept for backward. */
import type { LayerSpec } from './layerSpec';
import { expectRank, inputAt, passThrough, type LayerSpecGroup } from './shapes';

// Dropout(p=0.5, inplace=False) and the others: backward multiplies by the mask it kept (one
// byte per element for Dropout's boolean mask; the feature variants keep one value per channel
// and AlphaDropout a noise tensor, counted alike as a best effort).
const dropout = passThrough({ category: 'dropout', savesInput: false, savesOutput: false, extraBytesPerElement: 1 });

// Dropout1d zeroes whole channels of (N, C, L) or (C, L) and rejects other ranks.
const dropout1d: LayerSpec = {
  ...dropout,
  forward(inputs, args) {
    const input = inputAt(inputs, 0, args.type);
    expectRank(input, [2, 3], args.type, 'a 2-D (C, L) or 3-D (N, C, L)');
    return input;
  },
};

export const dropoutLayers: LayerSpecGroup = {
  Dropout: dropout,
  Dropout1d: dropout1d,
  // Dropout2d and Dropout3d only warn about an unexpected rank.
  Dropout2d: dropout,
  Dropout3d: dropout,
  AlphaDropout: dropout,
  FeatureAlphaDropout: dropout,
};
