import type { CatalogArchitecture, CatalogMiss, CatalogOptions } from './catalog';
import { transformersArchitecture } from './hf/transformers';
import { timmArchitecture } from './timm/timm';
import { torchvisionArchitecture } from './torchvision/torchvision';

/** A constructor call of a standard architecture, as the analyzer read it from the script. */
export type CatalogRequest =
  | { readonly library: 'torchvision' | 'timm'; readonly name: string; readonly options: CatalogOptions }
  | {
      readonly library: 'transformers';
      /** `BertForMaskedLM`, `AutoModelForSequenceClassification`. */
      readonly className: string;
      /** `bert-base-cased`, from `from_pretrained` or the config's own `from_pretrained`. */
      readonly checkpoint?: string;
      /** `GPT2Config` when the model is built from a config object of that class. */
      readonly configClass?: string;
      /** Options set on the config object. */
      readonly config?: CatalogOptions;
      /** Keyword arguments of the model call (`num_labels=3` in `from_pretrained`). */
      readonly options: CatalogOptions;
    };

/** The catalog's architecture for a constructor call, or why there is none. */
export function findArchitecture(request: CatalogRequest): CatalogArchitecture | CatalogMiss {
  switch (request.library) {
    case 'torchvision':
      return torchvisionArchitecture(request.name, request.options);
    case 'timm':
      return timmArchitecture(request.name, request.options);
    case 'transformers': {
      const { library: _library, ...rest } = request;
      return transformersArchitecture(rest);
    }
  }
}
