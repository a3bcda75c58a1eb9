import type { TypeLocation } from '../model/model';
import { typeNameInFile } from './names';

/**
 * `name`, or `name` with as many trailing `_` as it takes to be free in `taken`; the result is
 * added to `taken`. The one rule for every pair of declarations that would share a generated
 * name: protoc accepts them (they differ in the .proto), so the generator names them apart
 * instead of refusing the file.
 */
export function distinctName(name: string, taken: Set<string>): string {
  let result = name;
  while (taken.has(result)) result = `${result}_`;
  taken.add(result);
  return result;
}

/**
 * The TypeScript names of the messages and enums of each file. Nested names join with `_`, so
 * `Order.Line` and a top-level `Order_Line` (or `then` escaped to `then_` and a type really
 * named `then_`) would share one; the name written in the .proto keeps it, the others get
 * trailing `_` (`Order_Line_`). Computed from the full names alone, sorted, so a module that
 * imports a type names it as the module declaring it does, whichever command and input order.
 */
export class TypeNames {
  private byFile: Map<string, TypeLocation[]> | undefined;
  private readonly names = new Map<string, ReadonlyMap<string, string>>();

  constructor(private readonly types: ReadonlyMap<string, TypeLocation>) {}

  /** The TypeScript name of the type at `location` in its own module. */
  nameOf(location: TypeLocation): string {
    const name = this.namesOf(location.file).get(location.fullName);
    return name ?? typeNameInFile(location.fullName, location.package);
  }

  /** Every type name of `file`'s module, by full name. */
  namesOf(file: string): ReadonlyMap<string, string> {
    let names = this.names.get(file);
    if (names === undefined) {
      names = allocate(this.locationsOf(file));
      this.names.set(file, names);
    }
    return names;
  }

  private locationsOf(file: string): readonly TypeLocation[] {
    if (this.byFile === undefined) {
      // One pass over every type of the request, not one per file asked about.
      this.byFile = new Map();
      for (const location of this.types.values()) {
        const list = this.byFile.get(location.file);
        if (list === undefined) this.byFile.set(location.file, [location]);
        else list.push(location);
      }
    }
    return this.byFile.get(file) ?? [];
  }
}

function allocate(locations: readonly TypeLocation[]): Map<string, string> {
  const ranked = locations.map((location) => {
    const base = typeNameInFile(location.fullName, location.package);
    const local =
      location.package === ''
        ? location.fullName
        : location.fullName.slice(location.package.length + 1);
    // Rank: a name as written first, then by nesting depth, then by full name.
    const asWritten = base === local ? 0 : 1;
    const depth = local.split('.').length;
    return { fullName: location.fullName, base, asWritten, depth };
  });
  ranked.sort(
    (a, b) =>
      a.asWritten - b.asWritten ||
      a.depth - b.depth ||
      (a.fullName < b.fullName ? -1 : a.fullName > b.fullName ? 1 : 0),
  );
  const taken = new Set<string>();
  const names = new Map<string, string>();
  for (const r of ranked) names.set(r.fullName, distinctName(r.base, taken));
  return names;
}
