/** `npm run gpus:sync`: rewrites package.json's `gpuEstimator.gpu` choices and the README's row for it from src/core/gpus/gpuProfiles.json. */
import { findPackageRoot } from '../../src/core/parsing/parserAssets';
import { syncGpuSettings } from './gpuSettings';

const changed = syncGpuSettings(findPackageRoot(__dirname));
console.log(changed.length > 0 ? `wrote ${changed.join(', ')}` : 'package.json and README.md already agree with gpuProfiles.json');
