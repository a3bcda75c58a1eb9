import type { Type } from 'protobufjs';

/*
 * The parts of a message protoc checks against each other and protobufjs does not: reserved
 * and extension ranges that overlap, an extension range over a declared field, a name reserved
 * twice, a oneof without members. Each is a file protoc refuses.
 */

type Range = readonly [number, number];

/** What protoc refuses in the ranges, reserved names or oneofs of message `type`, if anything. */
export function messageRangeProblem(type: Type): string | undefined {
  const reserved = (type.reserved ?? []).filter((r): r is number[] => Array.isArray(r));
  const extensions = type.extensions ?? [];
  return (
    overlapIn(reserved.map(asRange), 'reserved') ??
    overlapIn(extensions.map(asRange), 'extension') ??
    extensionOverReserved(extensions.map(asRange), reserved.map(asRange)) ??
    extensionOverField(extensions.map(asRange), type) ??
    nameReservedTwice(type) ??
    emptyOneof(type)
  );
}

function asRange(r: readonly number[]): Range {
  return [r[0], r[1]];
}

function overlaps(a: Range, b: Range): boolean {
  return a[0] <= b[1] && b[0] <= a[1];
}

function show([start, end]: Range): string {
  return start === end ? `${start}` : `${start} to ${end}`;
}

function overlapIn(ranges: readonly Range[], what: string): string | undefined {
  for (let i = 1; i < ranges.length; i++) {
    const earlier = ranges.slice(0, i).find((r) => overlaps(r, ranges[i]));
    if (earlier !== undefined) {
      return `${what} range ${show(ranges[i])} overlaps with already-defined range ${show(earlier)}`;
    }
  }
  return undefined;
}

function extensionOverReserved(
  extensions: readonly Range[],
  reserved: readonly Range[],
): string | undefined {
  for (const ext of extensions) {
    const hit = reserved.find((r) => overlaps(r, ext));
    if (hit !== undefined) {
      return `extension range ${show(ext)} overlaps with reserved range ${show(hit)}`;
    }
  }
  return undefined;
}

function extensionOverField(extensions: readonly Range[], type: Type): string | undefined {
  for (const ext of extensions) {
    const field = type.fieldsArray.find(
      (f) => f.declaringField === null && f.id >= ext[0] && f.id <= ext[1], // not an extension
    );
    if (field !== undefined) {
      return `extension range ${show(ext)} includes field "${field.name}" (${field.id})`;
    }
  }
  return undefined;
}

function nameReservedTwice(type: Type): string | undefined {
  const names = (type.reserved ?? []).filter((r): r is string => typeof r === 'string');
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  return twice === undefined ? undefined : `field name "${twice}" is reserved multiple times`;
}

function emptyOneof(type: Type): string | undefined {
  const empty = type.oneofsArray.find((o) => o.oneof.length === 0);
  return empty === undefined ? undefined : `oneof ${empty.name} has no fields`;
}
