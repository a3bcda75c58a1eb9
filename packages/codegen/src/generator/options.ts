/** Options of the generator, shared by both commands (`--granary_opt` / CLI flags). */
export interface GeneratorOptions {
  /**
   * Extension appended to relative imports between generated modules. Leave empty for
   * CommonJS builds (as in this repository); use `.js` for ESM with `moduleResolution: NodeNext`.
   * @default ''
   */
  importExtension: string;
}

/** Defaults of `GeneratorOptions`. */
export const DEFAULT_GENERATOR_OPTIONS: GeneratorOptions = {
  importExtension: '',
};
