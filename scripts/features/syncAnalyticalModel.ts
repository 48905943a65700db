/**
 * `npm run features:sync`: rewrites src/core/features/analyticalModel.json, the analytical model
 * as data for the Python training pipeline, from the TypeScript that defines it.
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { analyticalModelJson } from '../../src/core/features/analyticalModelData';
import { findPackageRoot } from '../../src/core/parsing/parserAssets';

const file = path.join(findPackageRoot(__dirname), 'src', 'core', 'features', 'analyticalModel.json');
writeFileSync(file, analyticalModelJson());
console.log(`wrote ${path.relative(process.cwd(), file)}`);
