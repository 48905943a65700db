import type { LayerCall } from '../layerCall';
import type { SourceRange } from '../../parsing/syntax';
import type { CatalogArchitecture } from '../../catalog/catalog';
import type { ClassValue, ParameterValue, PyValue } from './pyValues';

export type ModuleKind = 'layer' | 'sequential' | 'list' | 'dict' | 'user' | 'catalog';

/**
 * A standard architecture from the catalog (`torchvision.models.resnet50()`), or a part of one
 * reached by attribute (`model.classifier`). Layers the script puts in place of the
 * architecture's are children of the root, under their dotted path (`fc`, `classifier.6`).
 */
export interface CatalogPart {
  readonly architecture: CatalogArchitecture;
  readonly root: ModuleObject;
  /** Dotted module path inside the architecture; '' for the model itself. */
  readonly path: string;
}

let nextId = 1;
/** Bumped whenever any module's children change, so cached module lists know they are stale. */
let generation = 0;

/**
 * An `nn.Module` built by the analyzed script: a torch.nn layer with its constructor arguments,
 * a container, or an instance of the script's own class with its registered children (in
 * registration order, as `named_modules()` lists them) and parameters.
 */
export class ModuleObject {
  /** How many modules were built so far in this process (lets loops tell whether they build any). */
  static get created(): number {
    return nextId - 1;
  }

  readonly id = nextId++;
  readonly children = new Map<string, ModuleObject>();
  readonly parameters = new Map<string, ParameterValue>();
  readonly attrs = new Map<string, PyValue>();
  /** For a layer whose `weight` was assigned another layer's (weight tying). */
  tiedWeightOf?: ModuleObject;
  /** For kind 'catalog': which architecture, and which part of it. */
  catalog?: CatalogPart;

  constructor(
    readonly kind: ModuleKind,
    readonly className: string,
    readonly range: SourceRange,
    readonly layer?: Omit<LayerCall, 'path'> & { path: string },
    readonly classValue?: ClassValue,
  ) {}

  /** Registers a child the way `nn.Module.__setattr__` does: a new name is appended, an old one keeps its place. */
  setChild(name: string, child: ModuleObject): void {
    this.children.set(name, child);
    this.attrs.delete(name);
    generation += 1;
  }

  private cached: { generation: number; modules: [string, ModuleObject][] } | undefined;

  /** Every module below this one with its dotted path, depth first in registration order; a shared module keeps its first path. */
  namedModules(): [string, ModuleObject][] {
    if (this.cached?.generation !== generation) this.cached = { generation, modules: this.collect('', new Set()) };
    return this.cached.modules;
  }

  private collect(prefix: string, seen: Set<number>): [string, ModuleObject][] {
    const result: [string, ModuleObject][] = [];
    for (const [name, child] of this.children) {
      if (seen.has(child.id)) continue;
      seen.add(child.id);
      const path = prefix ? `${prefix}.${name}` : name;
      result.push([path, child]);
      for (const entry of child.collect(path, seen)) result.push(entry);
    }
    return result;
  }
}
