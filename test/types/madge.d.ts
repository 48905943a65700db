// madge 8 ships no types; this declares the part of its Node API that test/unit/architecture.unit.test.ts uses.
declare module 'madge' {
  interface MadgeConfig {
    fileExtensions?: string[];
    detectiveOptions?: { ts?: { skipTypeImports?: boolean } };
  }

  interface MadgeResult {
    /** Each cycle as the paths of its modules, relative to the folder given, in import order. */
    circular(): string[][];
    /** Imports madge could not resolve to a file (their edges are missing from the graph). */
    warnings(): { skipped: string[] };
  }

  function madge(path: string, config?: MadgeConfig): Promise<MadgeResult>;
  export = madge;
}
