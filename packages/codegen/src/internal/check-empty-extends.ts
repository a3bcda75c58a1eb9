import { ProtoParseError } from '../errors';
import { tokenize } from './proto-tokens';
import { locationAt } from './source-location';

/*
 * protoc refuses an `extend` block without a field (`extend Foo {}`: "Expected type name.");
 * protobufjs's parser reads it as nothing, and granary-codegen generated the file.
 */

/** Throws a ProtoParseError at the `}` of the first empty `extend` block of `file`. */
export function checkEmptyExtends(file: string, source: string): void {
  if (!/\bextend\b[^{]*\{\s*\}/.test(source)) return;
  let at = 0;
  const tokens = tokenize(source)
    .map((t) => ({ ...t, at: (at += t.text.length) - t.text.length }))
    .filter((t) => t.kind !== 'gap');
  // Braces of an option's value (text format, after `=`): a field named `extend` in it, as in
  // `option (o) = { extend: {} }` or `[(f) = { extend {} }]`, is no statement (protoc takes it).
  let inValue = 0;
  for (let i = 0; i < tokens.length; i++) {
    const text = tokens[i].text;
    if (text === '{' && (inValue > 0 || tokens[i - 1]?.text === '=')) inValue++;
    else if (text === '}' && inValue > 0) inValue--;
    if (inValue > 0 || text !== 'extend' || !/^[;{}]?$/.test(tokens[i - 1]?.text ?? '')) continue;
    let open = i + 1;
    while (open < tokens.length && tokens[open].text !== '{' && tokens[open].text !== ';') open++;
    if (tokens[open]?.text === '{' && tokens[open + 1]?.text === '}') {
      throw new ProtoParseError(
        `${locationAt(file, source, tokens[open + 1].at)}: an extend block needs at least one field (type name expected)`,
      );
    }
  }
}
