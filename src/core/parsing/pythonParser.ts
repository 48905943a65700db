import { Language, Parser, type Tree } from 'web-tree-sitter';

/** Where the two WebAssembly files live: the tree-sitter runtime and the Python grammar. */
export interface ParserAssets {
  /** Path of `web-tree-sitter.wasm`. */
  readonly runtimeWasm: string;
  /** Path of `tree-sitter-python.wasm`. */
  readonly grammarWasm: string;
}

/** Thrown when tree-sitter needs longer than the parse time limit (pathological input). */
export class ParseTimeout extends Error {}

/** Longest a single parse may take; tree-sitter checks it as it goes. */
export const PARSE_TIME_LIMIT_MS = 1_500;

/** A ready Python parser. One per process is enough: parsing is synchronous and cheap. */
export interface PythonParser {
  /**
   * Parses `source`; with `previous` (already edited, see incrementalParse.ts) reuses its
   * unchanged parts. Throws ParseTimeout past PARSE_TIME_LIMIT_MS.
   */
  parse(source: string, previous?: Tree): Tree;
}

let runtimeReady: Promise<void> | undefined;

/**
 * Loads the runtime once per process (Emscripten modules are global), then the grammar.
 * Fails with a plain message naming the file when an asset is missing.
 */
export async function createPythonParser(assets: ParserAssets): Promise<PythonParser> {
  runtimeReady ??= Parser.init({ locateFile: () => assets.runtimeWasm }).catch((error: unknown) => {
    runtimeReady = undefined;
    throw new Error(`cannot load the tree-sitter runtime from ${assets.runtimeWasm}: ${String(error)}`);
  });
  await runtimeReady;
  let python: Language;
  try {
    python = await Language.load(assets.grammarWasm);
  } catch (error) {
    throw new Error(`cannot load the Python grammar from ${assets.grammarWasm}: ${String(error)}`);
  }
  const parser = new Parser();
  parser.setLanguage(python);
  return {
    parse(source: string, previous?: Tree): Tree {
      const deadline = performance.now() + PARSE_TIME_LIMIT_MS;
      const tree = parser.parse(source, previous ?? null, { progressCallback: () => performance.now() > deadline });
      if (!tree) {
        parser.reset();
        throw new ParseTimeout(`parsing took longer than ${PARSE_TIME_LIMIT_MS / 1000} s`);
      }
      return tree;
    },
  };
}
