import type { SyntaxNode } from '../parsing/syntax';
import { dirnameOf, isInside, joinPath, relativeTo, type ProjectSource } from '../project/projectFiles';
import { ImportTable } from './imports';
import { Budget, BudgetExceeded } from './interpreter/budget';
import { classAttribute } from './interpreter/classes';
import { Interpreter, type ProjectImports } from './interpreter/interpreter';
import { isList, kindOf, Scope, unresolved, type ClassValue, type DictValue, type InstanceValue, type PyValue } from './interpreter/pyValues';
import { importedModules } from './interpreter/definitionTime';
import type { AnalysisNote } from './modelDescription';
import { sysPathEntries } from './sysPath';
import type { ConfigSources } from './config/configSources';

/** How deeply imports may nest (a imports b imports c ...) before the loader stops and says so. */
export const MAX_IMPORT_DEPTH = 8;
/** How many of the project's files one analysis may load. */
export const MAX_IMPORTED_FILES = 48;
/** What all imported modules' top levels may spend together, and what one may spend. */
const PROJECT_STEPS = 300_000;
const PROJECT_MILLIS = 200;
const MODULE_STEPS = 100_000;
const MODULE_MILLIS = 80;
/** What reading, parsing and running the imported modules may take together, in wall-clock time. */
const MAX_IMPORT_MILLIS = 600;
/**
 * How much of the files and time imports may use that import statements may take running modules
 * ahead of need (importNow): the rest is kept for the names the script reads, so a package that
 * imports fifty architectures cannot use it all up before the one the script builds is loaded.
 */
const EAGER_SHARE = 0.5;

/**
 * Never looked for among the project's files: the libraries the analyzer knows by name (catalog,
 * layer specs), so a stray `torch/` folder cannot hide them, and modules nearly every script
 * imports, which a project file could not shadow without breaking the script itself.
 */
const KNOWN_LIBRARIES = new Set(['torch', 'torchvision', 'timm', 'transformers', 'os', 'sys', 'math', 'argparse', 'numpy']);

/**
 * Modules a training script commonly imports that are not the project's: Python's standard library
 * and the usual third-party packages. A script that finds no model is told which of its other
 * imports the project does not have (`from model import GPT` with no model.py), and these are
 * left out of that list.
 */
const COMMON_MODULES = new Set(
  (
    'abc argparse ast bisect collections contextlib copy csv dataclasses datetime enum functools gc glob hashlib heapq importlib inspect io ' +
    'itertools json logging math multiprocessing operator os pathlib pickle platform pprint queue random re shutil signal socket statistics ' +
    'string struct subprocess sys tempfile textwrap threading time traceback types typing unittest urllib uuid warnings weakref zipfile tarfile ' +
    'numpy pandas scipy sklearn matplotlib seaborn PIL cv2 tqdm wandb tensorboard tensorboardX yaml omegaconf hydra lightning pytorch_lightning ' +
    'accelerate datasets tokenizers einops h5py requests torchaudio torchtext apex deepspeed mlflow rich click fire absl jax tensorflow keras ' +
    'albumentations skimage librosa soundfile nltk spacy sentencepiece tiktoken safetensors huggingface_hub peft bitsandbytes xformers triton onnx onnxruntime trl unsloth'
  ).split(' '),
);

/** Parses a project file into the analyzer's syntax copy; throws when it cannot (parse time limit). */
export type ParseModule = (path: string, source: string) => SyntaxNode;

/** One of the project's modules: a `.py` file, a package's `__init__.py`, or a namespace package's folder. */
interface ProjectModule {
  /** The dotted name it was first imported under (for notes and `__name__`). */
  readonly name: string;
  /** Its file; undefined for a namespace package (a folder without `__init__.py`). */
  readonly file?: string;
  /** The folder its submodules live in, for a package. */
  readonly packageDir?: string;
  readonly namespace: InstanceValue;
  scope?: Scope;
  imports?: ImportTable;
  state: 'new' | 'loading' | 'done';
}

/**
 * The project's own modules for one analysis. A name the script imports from one of them (`from
 * model import GPT`, `import model` then `model.RNNModel`, `from .layers import Block`, `from
 * models import *`) is looked up when the interpreter first reads it: the module's file is read
 * through the injected ProjectFiles, parsed, and its top level run by the same interpreter
 * (classes, functions, constants, its own imports), once per analysis. Bounded by depth, file
 * count and a step and time budget; what it cannot follow (a missing file, a syntax error, a
 * cycle, a folder outside the root) becomes a note naming the module, never an exception.
 */
export class ProjectModules implements ProjectImports {
  readonly notes: AnalysisNote[] = [];
  /** Every file read and every path looked for, with the answer: the next analysis reuses this one's results only while they hold. */
  readonly consulted = new Map<string, string | boolean | undefined>();
  private readonly byPath = new Map<string, ProjectModule>();
  private readonly modulesOf = new WeakMap<InstanceValue, ProjectModule>();
  private readonly loading: ProjectModule[] = [];
  private readonly searchDirs: string[];
  private readonly budget: Budget;
  private loaded = 0;
  private loadMillis = 0;
  /** When the outermost load under way started (loads nest: a module's imports load inside it). */
  private outermostStart = 0;
  /** The share of the imports' steps that modules run ahead of need (and what they load) may spend. */
  private readonly eagerBudget: Budget;
  /** How many loads ahead of need are under way: what they load is paid from eagerBudget. */
  private eager = 0;
  /**
   * Lookups under way (`file|name`): `a` and `b` importing `*` from each other, or `from b import
   * Net` in `a` and `from a import Net` in `b`, would otherwise ask each other forever.
   */
  private readonly underWay = new Set<string>();
  /** The budget of the statements being discovered: loading a module gives it back the time the load took. */
  payer?: Budget;
  /** What the imported modules read of the configuration (environment, config files), as the script does. */
  config?: ConfigSources;

  /** The script's own top-level import statements, run once when discovery starts (runScriptImports). */
  private scriptImports: SyntaxNode[] | undefined;
  /** Registries a library keeps for the whole process (timm's `register_model`), filled by the project's modules. */
  private readonly registries = new Map<string, DictValue>();

  constructor(
    private readonly source: ProjectSource,
    scriptRoot: SyntaxNode,
    private readonly parse: ParseModule,
    fileBudget: Budget,
  ) {
    this.budget = fileBudget.limit(PROJECT_STEPS, PROJECT_MILLIS);
    // Its time is counted in load time (runOnce), not from now: the script may start importing late.
    this.eagerBudget = this.budget.limit(PROJECT_STEPS * EAGER_SHARE, Infinity);
    const { root, path } = source;
    // sys.path as Python builds it for `python train.py`: the script's folder first; then the root
    // (scripts run from it) and `src/` (a src-layout package installed in development mode).
    const dirs = [dirnameOf(path), root, joinPath(root, 'src')];
    for (const entry of sysPathEntries(scriptRoot, path)) {
      if (isInside(entry, root)) dirs.push(entry);
      else this.note(`sys.path entry ${entry} is outside the project root ${root}; imports from it are not followed (a root above both, such as the CLI's --root, includes it).`);
    }
    this.searchDirs = [...new Set(dirs)];
    this.scriptImports = scriptRoot.namedChildren.filter((statement) => statement.type === 'import_statement' || statement.type === 'import_from_statement');
  }

  /**
   * Runs the project modules the script's own top-level imports name, once per analysis, as Python
   * does before the script's first line: `import models.convnext` kept only so that its
   * `@register_model` builders are registered is otherwise never read, and the registry stays empty.
   */
  runScriptImports(): void {
    const statements = this.scriptImports;
    this.scriptImports = undefined;
    for (const statement of statements ?? []) for (const { module, names } of importedModules(statement)) this.importNow(module, names, this.source.path);
  }

  libraryRegistry(library: string): DictValue {
    let registry = this.registries.get(library);
    if (!registry) this.registries.set(library, (registry = { kind: 'dict', entries: new Map() }));
    return registry;
  }

  resolve(qualified: string, fromFile: string): PyValue | undefined {
    const key = `${fromFile}|${qualified}`;
    if (this.underWay.has(key)) {
      this.note(`\`${qualified}\` is imported in a circle (${this.shown(fromFile)} imports it from a module that imports it back); it is unknown, and Python would fail to import it.`);
      return unresolved(qualified, 'imported in a circle');
    }
    this.underWay.add(key);
    try {
      return this.resolveNow(qualified, fromFile);
    } finally {
      this.underWay.delete(key);
    }
  }

  private resolveNow(qualified: string, fromFile: string): PyValue | undefined {
    const level = /^\.*/.exec(qualified)![0].length;
    const parts = qualified.slice(level).split('.').filter((part) => part !== '');
    const head = parts[0];
    if (head === undefined) return undefined;
    let module: ProjectModule | undefined;
    if (level > 0) {
      let dir = dirnameOf(fromFile);
      for (let i = 1; i < level; i++) dir = dirnameOf(dir);
      if (!isInside(dir, this.source.root)) {
        this.note(`\`from ${'.'.repeat(level)} import\` in ${this.shown(fromFile)} reaches ${dir}, outside the project root ${this.source.root}; \`${qualified}\` is not followed.`);
        return unresolved(qualified, 'outside the project root');
      }
      module = this.moduleIn(dir, head, this.packageName(dir, head));
      if (!module) {
        this.note(`Relative import \`${'.'.repeat(level)}${head}\` in ${this.shown(fromFile)}: no ${head}.py or ${head}/__init__.py in ${this.shown(dir)}.`);
        return unresolved(qualified, 'module not found');
      }
    } else {
      if (KNOWN_LIBRARIES.has(head)) return undefined;
      module = this.onSearchPath(head);
      if (!module) return undefined;
      // `import lightning` beside a plain folder `lightning/`: Python takes the installed package over a namespace package.
      if (!module.file && COMMON_MODULES.has(head)) return undefined;
    }
    let value: PyValue = this.load(module);
    for (const [i, part] of parts.slice(1).entries()) {
      const found = this.member(value, part);
      // A namespace package (a plain folder such as `datasets/`) gives way to a library of the same name.
      if (found === undefined && i === 0 && !module.file) return undefined;
      if (found === undefined) {
        const owner = this.modulesOf.get(value as InstanceValue);
        if (owner?.state === 'done') this.note(`\`${qualified}\`: ${this.shown(owner.file ?? owner.packageDir ?? owner.name)} defines no \`${part}\` that the analysis could follow.`);
        return unresolved(qualified, `no \`${part}\` in ${owner?.name ?? 'this value'}`);
      }
      value = found;
    }
    return value;
  }

  fromWildcards(modules: readonly string[], name: string, fromFile: string): PyValue | undefined {
    const key = `${fromFile}|*${name}`;
    if (this.underWay.has(key)) return undefined;
    this.underWay.add(key);
    try {
      // The last `import *` that binds the name wins, as when Python runs them in order.
      for (const qualified of [...modules].reverse()) {
        const module = this.modulesOf.get(this.resolve(qualified, fromFile) as InstanceValue);
        if (!module?.scope || !this.exports(module, name)) continue;
        // Its scope's outermost part is its imports, its own star imports included.
        const found = module.scope.get(name);
        if (found !== undefined) return found;
      }
      return undefined;
    } finally {
      this.underWay.delete(key);
    }
  }

  importNow(qualified: string, names: readonly string[], fromFile: string): void {
    const level = /^\.*/.exec(qualified)![0].length;
    const parts = qualified.slice(level).split('.').filter((part) => part !== '');
    let dir = dirnameOf(fromFile);
    for (let i = 1; i < level; i++) dir = dirnameOf(dir);
    if (level > 0 && !isInside(dir, this.source.root)) return;
    if (level > 0 && parts.length === 0) {
      // `from . import resnet, convnext`: the package is the one being run; its submodules are what is imported.
      for (const name of names) this.runOnce(this.moduleIn(dir, name, this.packageName(dir, name)));
      return;
    }
    const head = parts[0];
    if (head === undefined || (level === 0 && KNOWN_LIBRARIES.has(head))) return;
    let module = level > 0 ? this.moduleIn(dir, head, this.packageName(dir, head)) : this.onSearchPath(head);
    // Python runs each package on the way (`a`, then `a.b`) before the module named.
    this.runOnce(module);
    for (const part of parts.slice(1)) {
      module = module?.packageDir ? this.moduleIn(module.packageDir, part, `${module.name}.${part}`) : undefined;
      this.runOnce(module);
    }
    if (!module?.packageDir) return;
    // `from pkg import sub`: a name the package does not bind itself is its submodule, which the import runs.
    for (const name of names) if (name !== '*' && module.scope?.own(name) === undefined) this.runOnce(this.moduleIn(module.packageDir, name, `${module.name}.${name}`));
  }

  /** The top-level module `head` in the first search folder that has it, as `sys.path` is searched. */
  private onSearchPath(head: string): ProjectModule | undefined {
    for (const dir of this.searchDirs) {
      const module = this.moduleIn(dir, head, head);
      if (module) return module;
    }
    return undefined;
  }

  /**
   * Runs a module's top level unless it has run or is running (an import cycle, which Python
   * allows: the names bound so far are used), or the share of imports' files and time for running
   * modules ahead of need is used up: then it stays unrun, to be loaded when one of its names is read.
   */
  private runOnce(module: ProjectModule | undefined): void {
    if (module?.state !== 'new' || this.eagerBudget.spent()) return;
    const millis = this.loadMillis + (this.loading.length > 0 ? performance.now() - this.outermostStart : 0);
    if (this.loaded >= MAX_IMPORTED_FILES * EAGER_SHARE || millis > MAX_IMPORT_MILLIS * EAGER_SHARE) return;
    this.eager += 1;
    try {
      this.load(module);
    } finally {
      this.eager -= 1;
    }
  }

  /** `from M import *` binds the names in M's own `__all__`, else every name not starting with `_`. */
  private exports(module: ProjectModule, name: string): boolean {
    const all = module.scope?.own('__all__');
    if (isList(all)) return all.includes(name);
    return !name.startsWith('_');
  }

  /** An attribute of a module (a name it defines or imports, or a submodule of a package) or of a class. */
  private member(value: PyValue, name: string): PyValue | undefined {
    if (kindOf(value) === 'class') return classAttribute(value as ClassValue, name);
    const module = this.modulesOf.get(value as InstanceValue);
    if (!module) return undefined;
    return module.namespace.attrs.get(name);
  }

  private lookupIn(module: ProjectModule, name: string): PyValue | undefined {
    // Its own names, then its imports (star imports included, through its ImportScope), then its submodules.
    const bound = module.scope?.get(name);
    if (bound !== undefined) return bound;
    if (!module.packageDir) return undefined;
    const sub = this.moduleIn(module.packageDir, name, `${module.name}.${name}`);
    return sub ? this.load(sub) : undefined;
  }

  /** The module `name` in folder `dir`: a package (`name/__init__.py`), a file (`name.py`) or a namespace package (`name/`). */
  private moduleIn(dir: string, name: string, dotted: string): ProjectModule | undefined {
    const init = joinPath(dir, name, '__init__.py');
    if (this.exists(init)) return this.module(init, dotted, joinPath(dir, name));
    const file = joinPath(dir, `${name}.py`);
    if (this.exists(file)) return this.module(file, dotted);
    const folder = joinPath(dir, name);
    if (isInside(folder, this.source.root) && this.exists(folder)) return this.module(folder, dotted, folder, true);
    return undefined;
  }

  private module(path: string, name: string, packageDir?: string, namespaceOnly = false): ProjectModule {
    const known = this.byPath.get(path);
    if (known) return known;
    const entries = new ModuleNamespace((key) => this.lookupIn(module, key));
    const namespace: InstanceValue = { kind: 'instance', className: `module ${name}`, attrs: entries };
    // `models.__dict__[args.arch]`: the module's names as a dict.
    entries.set('__dict__', { kind: 'dict', entries });
    const module: ProjectModule = { name, ...(namespaceOnly ? {} : { file: path }), ...(packageDir ? { packageDir } : {}), namespace, state: namespaceOnly ? 'done' : 'new' };
    this.byPath.set(path, module);
    this.modulesOf.set(namespace, module);
    return module;
  }

  /** Runs a module's top level once; on a cycle, a bound or an error, gives what it has so far. */
  private load(module: ProjectModule): PyValue {
    if (module.state === 'loading') {
      const chain = [...this.loading.slice(this.loading.indexOf(module)).map((m) => m.name), module.name].join(' -> ');
      this.note(`Import cycle ${chain}: names ${module.name} defines after the import that closes the cycle may be unknown.`);
      return module.namespace;
    }
    if (module.state === 'done' || !module.file) return module.namespace;
    const started = performance.now();
    if (this.loading.length === 0) this.outermostStart = started;
    try {
      return this.run(module, module.file);
    } finally {
      if (this.loading.length === 0) {
        const took = performance.now() - started;
        this.loadMillis += took;
        this.payer?.postpone(took);
      }
    }
  }

  private run(module: ProjectModule, file: string): PyValue {
    // Ahead of need and out of its share: left unrun, for a read of one of its names to load.
    if (this.eager > 0 && (this.eagerBudget.spent() || this.loaded >= MAX_IMPORTED_FILES * EAGER_SHARE)) return module.namespace;
    module.state = 'done';
    if (this.loading.length >= MAX_IMPORT_DEPTH) return this.stop(module, `imports nest more than ${MAX_IMPORT_DEPTH} deep`);
    if (this.loaded >= MAX_IMPORTED_FILES) return this.stop(module, `more than ${MAX_IMPORTED_FILES} project files imported`);
    if (this.budget.spent() || this.loadMillis > MAX_IMPORT_MILLIS) return this.stop(module, 'out of time or steps for imports');
    const text = this.read(file);
    if (text === undefined) return this.stop(module, 'the file cannot be read');
    let root: SyntaxNode;
    try {
      root = this.parse(file, text);
    } catch (error) {
      return this.stop(module, error instanceof Error ? error.message : String(error));
    }
    this.loaded += 1;
    if (root.hasError) this.note(`Imported module \`${module.name}\` (${this.shown(file)}) has syntax errors; Python would not import it. Names defined in the parts that parse are used.`);
    const imports = ImportTable.fromModule(root);
    const scope = new Scope(new ImportScope(imports, this, file));
    scope.set('__name__', module.name);
    scope.set('__file__', file);
    module.scope = scope;
    module.imports = imports;
    module.state = 'loading';
    this.loading.push(module);
    const payer = this.eager > 0 ? this.eagerBudget : this.budget;
    const interpreter = new Interpreter(imports, {}, payer.limit(MODULE_STEPS, MODULE_MILLIS), { file: file, project: this, imported: true }, this.config);
    interpreter.scriptLevel = true;
    // A module run ahead of need and cut short runs again, whole, if one of its names is read later.
    let cutShort = false;
    try {
      for (const statement of root.namedChildren) if (interpreter.exec(statement, scope)) break;
    } catch (error) {
      if (!(error instanceof BudgetExceeded)) throw error;
      if (this.eager > 0) cutShort = true;
      else this.note(`Import of \`${module.name}\` stopped early (${error.message}); names it defines later are unknown.`);
    } finally {
      this.loading.pop();
      module.state = cutShort ? 'new' : 'done';
      // What the top level bound is listed too, so `for name in models.__dict__` sees the names.
      if (!cutShort) for (const name of scope.ownNames()) if (!module.namespace.attrs.has(name)) module.namespace.attrs.set(name, scope.get(name)!);
    }
    return module.namespace;
  }

  /**
   * The modules `imports` names that are not in the project and are not common libraries: for a
   * script with no model, the likely reason (the model's file is outside the folder analysed).
   */
  missingModules(imports: readonly string[]): string[] {
    const heads = new Set(imports.filter((name) => !name.startsWith('.')).map((name) => name.split('.')[0]!));
    return [...heads].filter((head) => !KNOWN_LIBRARIES.has(head) && !COMMON_MODULES.has(head) && this.resolve(head, this.source.path) === undefined);
  }

  /** Where absolute imports are looked for, for notes. */
  get searchFolders(): readonly string[] {
    return this.searchDirs;
  }

  private stop(module: ProjectModule, reason: string): PyValue {
    this.note(`Import of \`${module.name}\` (${this.shown(module.file ?? module.name)}) not followed: ${reason}.`);
    return module.namespace;
  }

  /** The dotted name of module `name` in folder `dir`, counted from the search folder that holds it. */
  private packageName(dir: string, name: string): string {
    const base = this.searchDirs.filter((d) => isInside(dir, d)).sort((a, b) => b.length - a.length)[0];
    const prefix = base === undefined ? '' : relativeTo(dir, base);
    return prefix && prefix !== dir ? `${prefix.replace(/\//g, '.')}.${name}` : name;
  }

  private shown(path: string): string {
    return relativeTo(path, this.source.root);
  }

  /** Another file of the project (a configuration file the script loads), recorded like an imported module's: a change to it re-estimates the script. */
  readFile(path: string): string | undefined {
    return this.read(path);
  }

  private read(path: string): string | undefined {
    const text = this.source.files.read(path);
    this.consulted.set(`read:${path}`, text);
    return text;
  }

  private exists(path: string): boolean {
    const key = `exists:${path}`;
    const known = this.consulted.get(key);
    if (typeof known === 'boolean') return known;
    const exists = this.source.files.exists(path);
    this.consulted.set(key, exists);
    return exists;
  }

  private note(message: string): void {
    if (!this.notes.some((note) => note.message === message)) this.notes.push({ severity: 'warning', message });
  }
}

/**
 * A module's names as a mapping: what its top level bound, and, looked up on demand, what it
 * imports and its submodules (`import mingpt` then `mingpt.model`).
 */
class ModuleNamespace extends Map<string, PyValue> {
  constructor(private readonly lookup: (name: string) => PyValue | undefined) {
    super();
  }

  override get(name: string): PyValue | undefined {
    return super.has(name) ? super.get(name) : this.lookup(name);
  }

  override has(name: string): boolean {
    return super.has(name) || this.lookup(name) !== undefined;
  }
}

/**
 * The outermost scope of an imported module: the names its imports bind. Its functions close over
 * it, so a method of `model.py` run from the script still reads `nn` and `F` as `model.py` imported them.
 */
class ImportScope extends Scope {
  constructor(
    private readonly imports: ImportTable,
    private readonly project: ProjectModules,
    private readonly file: string,
  ) {
    super();
  }

  override get(name: string): PyValue | undefined {
    const qualified = this.imports.resolve(name);
    if (qualified !== undefined) return this.project.resolve(qualified, this.file) ?? { kind: 'external', name: qualified };
    if (this.imports.wildcardModules.length) return this.project.fromWildcards(this.imports.wildcardModules, name, this.file);
    return undefined;
  }

  override has(name: string): boolean {
    return this.get(name) !== undefined;
  }
}

/** Whether a cached analysis still holds: every file it read and path it looked for gives the same answer. */
export function projectUnchanged(consulted: ReadonlyMap<string, string | boolean | undefined>, source: ProjectSource): boolean {
  for (const [key, answer] of consulted) {
    const [kind, path] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
    if ((kind === 'read' ? source.files.read(path) : source.files.exists(path)) !== answer) return false;
  }
  return true;
}
