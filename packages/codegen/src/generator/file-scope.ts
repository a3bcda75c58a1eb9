import { UnsupportedProtoError } from '../errors';
import type { ExtensionModel, FileModel, MessageModel, TypeLocation } from '../model/model';
import { WELL_KNOWN_FILES } from '../runtime/well-known';
import { extensionKeys } from './member-names';
import { importAlias, relativeImport, typeNameInFile } from './names';
import type { GeneratorOptions } from './options';
import { distinctName, TypeNames } from './type-names';

/**
 * Names as seen from one generated module: how to write a type or codec declared here, in an
 * imported module, or among the well-known types of the runtime, plus the imports that needs.
 */
export class FileScope {
  /** Imported .proto file → namespace alias. */
  private readonly imports = new Map<string, string>();
  private readonly aliases = new Set<string>();
  /** Imported files whose namespace alias the code uses (the others get a bare import only). */
  private readonly referenced = new Set<string>();
  /** Well-known message types used as rpc request/response (need a codec constant). */
  private readonly wellKnownCodecs = new Set<string>();
  /** Top-level names of the module: its types', then each service's as it is declared. */
  private readonly declared: Set<string>;
  private keys: ReadonlyMap<ExtensionModel, string> | undefined;

  constructor(
    readonly file: FileModel,
    private readonly types: ReadonlyMap<string, TypeLocation>,
    private readonly options: GeneratorOptions,
    private readonly typeNames: TypeNames = new TypeNames(types),
  ) {
    this.declared = new Set(typeNames.namesOf(file.name).values());
  }

  /**
   * A top-level name for a service's class or helper: `tsName`, or with trailing `_` when a
   * type or an earlier service of the module has it (message `RegistryGrain` beside service
   * `Registry` gives class `RegistryGrain_`). Types keep their names: other modules use them.
   */
  declare(tsName: string): string {
    return distinctName(tsName, this.declared);
  }

  /** The key of one of this file's extensions in its scope (see `extensionKeys`). */
  extensionKey(ext: ExtensionModel): string {
    this.keys ??= extensionKeys(this.file);
    return this.keys.get(ext) ?? ext.name;
  }

  /** The TypeScript name of a message or enum declared in this file. */
  localName(fullName: string): string {
    return this.typeNames.nameOf(this.locate(fullName));
  }

  /** A type expression for message or enum `fullName`. */
  typeRef(fullName: string): string {
    const location = this.locate(fullName);
    if (location.file === this.file.name) return this.typeNames.nameOf(location);
    if (WELL_KNOWN_FILES.includes(location.file))
      return `$rt.${typeNameInFile(fullName, location.package)}`;
    this.referenced.add(location.file);
    return `${this.importOf(location.file)}.${this.typeNames.nameOf(location)}`;
  }

  /** A value expression for the codec of message `fullName`. */
  codecRef(fullName: string): string {
    const location = this.locate(fullName);
    if (WELL_KNOWN_FILES.includes(location.file)) {
      this.wellKnownCodecs.add(fullName);
      return `$${fullName.replace(/\./g, '_')}`;
    }
    return this.typeRef(fullName);
  }

  /**
   * The module and interface name of message `fullName` declared in another file, for a module
   * augmentation that adds this file's extensions to it (the module is imported too, so its
   * types are in the shared root before this file's extensions are added).
   */
  augmentationTarget(fullName: string): { specifier: string; name: string } {
    const location = this.locate(fullName);
    this.importOf(location.file);
    return {
      specifier: relativeImport(this.file.name, location.file, this.options.importExtension),
      name: this.typeNames.nameOf(location),
    };
  }

  /**
   * Imported .proto files, sorted by file name, with their namespace alias (undefined when
   * nothing refers to it: the module is imported for its extendees only) and specifier.
   */
  importedFiles(): [file: string, alias: string | undefined, specifier: string][] {
    return [...this.imports.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([file, alias]) => [
        file,
        this.referenced.has(file) ? alias : undefined,
        relativeImport(this.file.name, file, this.options.importExtension),
      ]);
  }

  /** Well-known message types that need a codec constant, sorted. */
  wellKnownCodecTypes(): string[] {
    return [...this.wellKnownCodecs].sort();
  }

  private importOf(file: string): string {
    let alias = this.imports.get(file);
    if (alias === undefined) {
      const base = importAlias(file);
      alias = base;
      for (let i = 2; this.aliases.has(alias); i++) alias = `${base}${i}`;
      this.aliases.add(alias);
      this.imports.set(file, alias);
    }
    return alias;
  }

  private locate(fullName: string): TypeLocation {
    const location = this.types.get(fullName);
    if (location === undefined) {
      throw new UnsupportedProtoError(`type ${fullName} used in ${this.file.name} is not defined`);
    }
    if (location.file.startsWith('google/protobuf/') && !WELL_KNOWN_FILES.includes(location.file)) {
      throw new UnsupportedProtoError(
        `${this.file.name} uses ${fullName} from ${location.file}; the supported google.protobuf ` +
          `files are ${WELL_KNOWN_FILES.join(', ')}`,
      );
    }
    return location;
  }
}

/** Every message of a file, nested ones after their parent, in declaration order. */
export function allMessages(messages: readonly MessageModel[]): MessageModel[] {
  return messages.flatMap((m) => [m, ...allMessages(m.messages)]);
}
