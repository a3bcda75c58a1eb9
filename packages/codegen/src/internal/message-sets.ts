import { Type } from 'protobufjs';
import type { ReflectionObject } from 'protobufjs';
import { refuseMessageSet } from '../model/model';
import { unescapeIdentifier } from './proto-source';
import { unescapeFullName } from './reflection-to-model';
import { declarationPattern, locationOf } from './source-location';

/**
 * Refuses a MessageSet among `declarations` (of `file`, its `source` as written) at its
 * `option message_set_wire_format` statement, `file:line:column` as every other error; the
 * model refuses it too, naming only the file, had this missed it.
 */
export function refuseMessageSets(
  declarations: readonly ReflectionObject[],
  file: string,
  source: string | undefined,
): void {
  for (const type of declarations) {
    if (!(type instanceof Type)) continue;
    if (type.options?.message_set_wire_format === true) {
      const from = Math.max(source?.search(declarationPattern(type)) ?? 0, 0);
      const where = locationOf(file, source, /\boption\s+message_set_wire_format\b/, 0, from);
      const fullName = unescapeFullName(type.fullName, unescapeIdentifier);
      refuseMessageSet(fullName, where, true);
    }
    refuseMessageSets(type.nestedArray, file, source);
  }
}
