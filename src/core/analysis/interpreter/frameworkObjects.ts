// The training frameworks' objects that hand the script's own values back: Lightning's Trainer and Fabric, accelerate's Accelerator.
import { classAttribute } from './classes';
import { asModule, kindOf, tuple, type DictValue, type FunctionValue, type InstanceValue, type PyValue } from './pyValues';

const LIGHTNING = '(lightning|pytorch_lightning|lightning\\.pytorch)';
const OBJECTS: readonly { pattern: RegExp; className: string }[] = [
  { pattern: new RegExp(`^${LIGHTNING}(\\.trainer(\\.trainer)?)?\\.Trainer$`), className: 'lightning.Trainer' },
  { pattern: /^lightning(\.fabric)?\.Fabric$/, className: 'lightning.Fabric' },
  { pattern: /^accelerate(\.accelerator)?\.Accelerator$/, className: 'accelerate.Accelerator' },
];
/** LightningCLI's parser as `add_arguments_to_parser(parser)` gets it: it records links and defaults, which lightningCli.ts applies. */
export const CLI_PARSER = 'lightning.LightningArgumentParser';
const CLASS_NAMES = new Set([...OBJECTS.map(({ className }) => className), CLI_PARSER]);

/** `L.Trainer(...)`, `Fabric(...)`, `Accelerator(...)`: an object remembering its arguments (the set-up reads them from the call itself). */
export function frameworkObject(qualified: string, kwargs: ReadonlyMap<string, PyValue>): InstanceValue | undefined {
  const found = OBJECTS.find(({ pattern }) => pattern.test(qualified));
  return found && { kind: 'instance', className: found.className, attrs: new Map(kwargs) };
}

export function isFrameworkObject(value: PyValue): boolean {
  return kindOf(value) === 'instance' && CLASS_NAMES.has((value as InstanceValue).className);
}

/**
 * What the script's code sees of the framework: `accelerator.prepare(model, optimizer, loader)`
 * and `fabric.setup(model, optimizer)` give back what they were given (the same model, so it is
 * one model under both names); `trainer.fit(model, datamodule)` runs the data module's (or the
 * model's) `prepare_data()`, `setup()` and `train_dataloader()`, so its datasets and its `DataLoader(batch_size=...)` are seen with the values the
 * script gave. `run` calls a method of the script with its receiver.
 */
export function frameworkMethod(self: InstanceValue, method: string, args: PyValue[], kwargs: ReadonlyMap<string, PyValue>, run: (fn: FunctionValue, receiver: PyValue) => void): PyValue {
  if (self.className === CLI_PARSER) return parserMethod(self, method, args, kwargs);
  if (method === 'prepare' || method === 'setup' || method === 'setup_dataloaders') return args.length === 1 ? args[0]! : tuple(args);
  if (self.className === 'lightning.Trainer' && method === 'fit') {
    const model = kwargs.get('model') ?? args[0];
    const data = kwargs.get('datamodule') ?? kwargs.get('train_dataloaders') ?? args[1];
    // Lightning builds the layers a module makes in its configure_model hook (a pretrained model loaded there for FSDP or DeepSpeed) before training.
    const modelClass = asModule(model)?.classValue;
    const configure = modelClass && classAttribute(modelClass, 'configure_model');
    if (kindOf(configure) === 'function') run(configure as FunctionValue, model!);
    for (const holder of [data, model]) {
      const classValue = asModule(holder)?.classValue ?? (kindOf(holder) === 'instance' ? (holder as InstanceValue).classValue : undefined);
      const loaders = classValue && classAttribute(classValue, 'train_dataloader');
      if (!classValue || kindOf(loaders) !== 'function') continue;
      // As Lightning does before it asks for the loader: the datasets it reads are made in these hooks.
      for (const hook of ['prepare_data', 'setup']) {
        const fn = classAttribute(classValue, hook);
        if (kindOf(fn) === 'function') run(fn as FunctionValue, holder!);
      }
      run(loaders as FunctionValue, holder!);
      break;
    }
  }
  return null;
}

/** `parser.link_arguments("data.num_classes", "model.num_classes", apply_on="instantiate")`, `parser.set_defaults({"model.lr": 0.1})`: recorded on the parser. */
function parserMethod(parser: InstanceValue, method: string, args: PyValue[], kwargs: ReadonlyMap<string, PyValue>): PyValue {
  if (method === 'link_arguments') {
    const links = parser.attrs.get('links');
    const [source, target] = [args[0] ?? kwargs.get('source'), args[1] ?? kwargs.get('target')];
    const on = kwargs.get('apply_on') ?? args[3] ?? 'parse';
    // A link computed from several sources (compute_fn) is not followed: the target keeps its own value.
    if (Array.isArray(links) && typeof source === 'string' && typeof target === 'string' && kwargs.get('compute_fn') === undefined && args[2] === undefined) links.push(tuple([source, target, on]));
  } else if (method === 'set_defaults') {
    const defaults = parser.attrs.get('defaults');
    if (kindOf(defaults) === 'dict') {
      if (kindOf(args[0]) === 'dict') for (const [key, value] of (args[0] as DictValue).entries) (defaults as DictValue).entries.set(key, value);
      for (const [key, value] of kwargs) (defaults as DictValue).entries.set(key, value);
    }
  }
  return null;
}
