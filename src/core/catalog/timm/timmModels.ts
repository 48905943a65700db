/**
 * timm names the catalog answers, and the architecture each is answered with. timm is not a
 * dependency and is not installed where the catalog is generated, so a timm model is mapped to a
 * torchvision model only where the two have the same parameter count: `published` is timm's own
 * figure (the `param_count` column of timm's results/results-imagenet.csv, in millions with two
 * decimals, read at huggingface/pytorch-image-models@0173a139), and a unit test checks the
 * torchvision model against it. Xception, which torchvision lacks, is built by the generator from
 * the published architecture (scripts/catalog/xception.py) and checked against timm's exact count.
 */

export interface TimmModel {
  /** The torchvision model whose layer table answers for this timm model. */
  readonly torchvision?: string;
  /** torchvision options that make it the same architecture (`{ aux_logits: false }`, `{ image_size: 384 }`). */
  readonly torchvisionOptions?: Readonly<Record<string, number | boolean>>;
  /** The model built from its published architecture instead (a key of the timm data). */
  readonly built?: string;
  /** The class timm builds. */
  readonly className: string;
  /** timm's published parameter count (millions, rounded to 0.01M) or the exact count where timm gives one. */
  readonly published: number;
  /** timm's default input size (its pretrained config's `input_size`). */
  readonly input: number;
  /** What differs from timm beyond module names, where something does. */
  readonly note?: string;
  /** The option timm uses for the image size of a fixed-size model (vit's `img_size`). */
  readonly sizeOption?: string;
}

const M = 1e6;

function tv(torchvision: string, className: string, published: number, input = 224, extra: Partial<TimmModel> = {}): TimmModel {
  return { torchvision, className, published: Math.round(published * M), input, ...extra };
}

const VGG_NOTE =
  "timm's VGG runs its first classifier layers as convolutions (ConvMlp) and pools globally afterwards; " +
  'at 224x224 the layers and parameters match torchvision, at other sizes activations differ.';

const SWIN_NOTE = "torchvision's Swin pads its windows and takes any image size; timm's may be built for 224x224 only.";

const EFFICIENTNET_B6_B7_NOTE = (b: number) =>
  `timm publishes no count for its efficientnet_b${b}; tf_efficientnet_b${b} (published ${b === 6 ? '43.04' : '66.35'}M) has the same ` +
  'channels and depth, differing only in padding, which holds no parameters.';

export const TIMM_MODELS: Readonly<Record<string, TimmModel>> = {
  resnet18: tv('resnet18', 'ResNet', 11.69),
  resnet34: tv('resnet34', 'ResNet', 21.8),
  resnet50: tv('resnet50', 'ResNet', 25.56),
  resnet101: tv('resnet101', 'ResNet', 44.55),
  resnet152: tv('resnet152', 'ResNet', 60.19),
  wide_resnet50_2: tv('wide_resnet50_2', 'ResNet', 68.88),
  wide_resnet101_2: tv('wide_resnet101_2', 'ResNet', 126.89),
  resnext50_32x4d: tv('resnext50_32x4d', 'ResNet', 25.03),
  resnext101_32x8d: tv('resnext101_32x8d', 'ResNet', 88.79),
  resnext101_64x4d: tv('resnext101_64x4d', 'ResNet', 83.46),
  vgg11: tv('vgg11', 'VGG', 132.86, 224, { note: VGG_NOTE }),
  vgg11_bn: tv('vgg11_bn', 'VGG', 132.87, 224, { note: VGG_NOTE }),
  vgg13: tv('vgg13', 'VGG', 133.05, 224, { note: VGG_NOTE }),
  vgg13_bn: tv('vgg13_bn', 'VGG', 133.05, 224, { note: VGG_NOTE }),
  vgg16: tv('vgg16', 'VGG', 138.36, 224, { note: VGG_NOTE }),
  vgg16_bn: tv('vgg16_bn', 'VGG', 138.37, 224, { note: VGG_NOTE }),
  vgg19: tv('vgg19', 'VGG', 143.67, 224, { note: VGG_NOTE }),
  vgg19_bn: tv('vgg19_bn', 'VGG', 143.68, 224, { note: VGG_NOTE }),
  mobilenetv2_050: tv('mobilenet_v2', 'EfficientNet', 1.97, 224, { torchvisionOptions: { width_mult: 0.5 } }),
  mobilenetv2_100: tv('mobilenet_v2', 'EfficientNet', 3.5),
  mobilenetv2_140: tv('mobilenet_v2', 'EfficientNet', 6.11, 224, { torchvisionOptions: { width_mult: 1.4 } }),
  mobilenetv3_large_100: tv('mobilenet_v3_large', 'MobileNetV3', 5.48),
  mobilenetv3_small_100: tv('mobilenet_v3_small', 'MobileNetV3', 2.54),
  efficientnet_b0: tv('efficientnet_b0', 'EfficientNet', 5.29, 224),
  efficientnet_b1: tv('efficientnet_b1', 'EfficientNet', 7.79, 224),
  efficientnet_b2: tv('efficientnet_b2', 'EfficientNet', 9.11, 256),
  efficientnet_b3: tv('efficientnet_b3', 'EfficientNet', 12.23, 288),
  efficientnet_b4: tv('efficientnet_b4', 'EfficientNet', 19.34, 320),
  efficientnet_b5: tv('efficientnet_b5', 'EfficientNet', 30.39, 448),
  efficientnet_b6: tv('efficientnet_b6', 'EfficientNet', 43.04, 528, { note: EFFICIENTNET_B6_B7_NOTE(6) }),
  efficientnet_b7: tv('efficientnet_b7', 'EfficientNet', 66.35, 600, { note: EFFICIENTNET_B6_B7_NOTE(7) }),
  inception_v3: tv('inception_v3', 'InceptionV3', 23.83, 299, { torchvisionOptions: { aux_logits: false } }),
  densenet121: tv('densenet121', 'DenseNet', 7.98),
  densenet161: tv('densenet161', 'DenseNet', 28.68),
  densenet169: tv('densenet169', 'DenseNet', 14.15),
  densenet201: tv('densenet201', 'DenseNet', 20.01),
  convnext_tiny: tv('convnext_tiny', 'ConvNeXt', 28.59),
  convnext_small: tv('convnext_small', 'ConvNeXt', 50.22),
  convnext_base: tv('convnext_base', 'ConvNeXt', 88.59),
  convnext_large: tv('convnext_large', 'ConvNeXt', 197.77),
  vit_base_patch16_224: tv('vit_b_16', 'VisionTransformer', 86.57, 224, { sizeOption: 'img_size' }),
  vit_base_patch32_224: tv('vit_b_32', 'VisionTransformer', 88.22, 224, { sizeOption: 'img_size' }),
  vit_large_patch16_224: tv('vit_l_16', 'VisionTransformer', 304.33, 224, { sizeOption: 'img_size' }),
  vit_base_patch16_384: tv('vit_b_16', 'VisionTransformer', 86.86, 384, { torchvisionOptions: { image_size: 384 }, sizeOption: 'img_size' }),
  vit_base_patch32_384: tv('vit_b_32', 'VisionTransformer', 88.3, 384, { torchvisionOptions: { image_size: 384 }, sizeOption: 'img_size' }),
  vit_large_patch16_384: tv('vit_l_16', 'VisionTransformer', 304.72, 384, { torchvisionOptions: { image_size: 384 }, sizeOption: 'img_size' }),
  vit_large_patch32_384: tv('vit_l_32', 'VisionTransformer', 306.63, 384, { torchvisionOptions: { image_size: 384 }, sizeOption: 'img_size' }),
  swin_tiny_patch4_window7_224: tv('swin_t', 'SwinTransformer', 28.29, 224, { note: SWIN_NOTE }),
  swin_small_patch4_window7_224: tv('swin_s', 'SwinTransformer', 49.61, 224, { note: SWIN_NOTE }),
  swin_base_patch4_window7_224: tv('swin_b', 'SwinTransformer', 87.77, 224, { note: SWIN_NOTE }),
  xception: { built: 'xception', className: 'Xception', published: 22855952, input: 299 },
};

/** Older and newer names of the same models: timm 0.9 renamed xception to legacy_xception. */
export const TIMM_ALIASES: Readonly<Record<string, string>> = {
  legacy_xception: 'xception',
};
