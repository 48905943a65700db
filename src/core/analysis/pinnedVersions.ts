import type { LaunchFiles } from './shardingSetup';

/**
 * The versions of torch and transformers a project asks for, in the files people pin them in
 * (requirements.txt, pyproject.toml, environment.yml, beside the script or at the project root): the
 * lowest version each allows (`==2.8.0`, `>=2.8`, `~=4.56`, conda's `pytorch=2.8`). Only a lower bound
 * says what is installed at least; a file that gives none (`torch<3`, an unpinned `torch`) says nothing.
 */
export interface PinnedVersion {
  readonly version: readonly number[];
  /** Where it was read: `torch>=2.8 in requirements.txt`. */
  readonly origin: string;
}

export interface PinnedVersions {
  readonly torch?: PinnedVersion;
  readonly transformers?: PinnedVersion;
}

const PIN_FILES = ['requirements.txt', 'requirements/train.txt', 'requirements-train.txt', 'pyproject.toml', 'environment.yml', 'environment.yaml'];
const MAX_PIN_CHARS = 256 * 1024;

/** `torch==2.8.0`, `transformers>=4.56,<5`, `"torch ~= 2.8"`, `- pytorch=2.8` (conda); not `torchvision==0.23` or a `#` comment. */
const PIN = /(?<![\w.-])(torch|pytorch|transformers)\s*(?:\[[^\]]*\])?\s*(===|==|>=|~=|=(?!=))\s*v?(\d+(?:\.\d+)*)/g;

export function pinnedVersions(files: LaunchFiles | undefined): PinnedVersions {
  const found: { torch?: PinnedVersion; transformers?: PinnedVersion } = {};
  if (!files) return found;
  for (const name of PIN_FILES) {
    const file = files.read(name);
    if (!file || file.text.length > MAX_PIN_CHARS) continue;
    for (const line of file.text.split('\n')) {
      const code = line.replace(/(^|\s)#.*$/, '');
      for (const match of code.matchAll(PIN)) {
        const library = match[1] === 'transformers' ? 'transformers' : 'torch';
        if (found[library]) continue;
        found[library] = { version: match[3]!.split('.').map(Number), origin: `${match[0].replace(/\s+/g, '')} in ${file.shown}` };
      }
    }
  }
  return found;
}

/** Whether `version` is at least `least` (`[2, 8]`), part by part. */
export function atLeast(version: readonly number[], least: readonly number[]): boolean {
  for (let i = 0; i < least.length; i++) {
    const part = version[i] ?? 0;
    if (part !== least[i]) return part > least[i]!;
  }
  return true;
}

export interface TrainerDefaultOptim {
  readonly name: string;
  readonly why: string;
}

/**
 * The Trainer's default `optim` for the versions pinned, where they decide it: `adamw_torch_fused`
 * with torch 2.8 or later (transformers 4.54 and later, huggingface/transformers#37358), `adamw_hf`
 * with transformers before 4.32 (huggingface/transformers#25109 made it `adamw_torch`). Undefined
 * otherwise: `adamw_torch`, which the analysis assumes.
 */
export function trainerDefaultOptim(pinned: PinnedVersions): TrainerDefaultOptim | undefined {
  const { torch, transformers } = pinned;
  if (transformers && !atLeast(transformers.version, [4, 32])) return { name: 'adamw_hf', why: `transformers before 4.32 (${transformers.origin})` };
  if (torch && atLeast(torch.version, [2, 8]) && (!transformers || atLeast(transformers.version, [4, 54]))) {
    return { name: 'adamw_torch_fused', why: `torch 2.8 or later (${torch.origin})${transformers ? ` and transformers 4.54 or later (${transformers.origin})` : ''}` };
  }
  return undefined;
}

/** How the assumption says it: `TrainingArguments default optim: adamw_torch_fused, with torch 2.8 or later (...)`. */
export function trainerDefaultOrigin(argumentsName: string, trainerDefault: TrainerDefaultOptim): string {
  return `${argumentsName} default optim: ${trainerDefault.name}, with ${trainerDefault.why}`;
}
