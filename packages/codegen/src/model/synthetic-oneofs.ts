/**
 * protoc's name for the synthetic oneof of each proto3 `optional` field of a message, by field
 * name: `_` + the field's name (no second `_` when it starts with one), then `X` in front until
 * no field, oneof or earlier synthetic oneof of the message has it (`optional int32 x` beside
 * `oneof _x {}` gets `X_x`). Fields in declaration order, `oneofs` the real ones.
 */
export function syntheticOneofNames(
  fields: readonly { readonly name: string; readonly proto3Optional: boolean }[],
  oneofs: readonly string[],
): Map<string, string> {
  const taken = new Set([...fields.map((f) => f.name), ...oneofs]);
  const names = new Map<string, string>();
  for (const field of fields) {
    if (!field.proto3Optional) continue;
    let name = field.name.startsWith('_') ? field.name : `_${field.name}`;
    while (taken.has(name)) name = `X${name}`;
    taken.add(name);
    names.set(field.name, name);
  }
  return names;
}
