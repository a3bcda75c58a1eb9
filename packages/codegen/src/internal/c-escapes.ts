/*
 * The escapes of a .proto string literal as protoc's tokenizer reads them: simple escapes
 * (`\n`, `\"`...), octal (`\303`) and hex (`\xA9`) bytes, and `\u00e9` / `\U0001f600` code
 * points written as UTF-8. protoc's CEscape (bytes defaults in descriptors) is a subset.
 */

const SIMPLE_ESCAPES: Record<string, number> = {
  n: 10,
  r: 13,
  t: 9,
  a: 7,
  b: 8,
  f: 12,
  v: 11,
  '\\': 92,
  "'": 39,
  '"': 34,
  '?': 63,
};

/** The bytes the body of a string literal (between its quotes) stands for. */
export function unescapeC(text: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== '\\') {
      // A character outside the BMP is two UTF-16 units; encoding each alone gives U+FFFD twice.
      const char = String.fromCodePoint(text.codePointAt(i) ?? 0);
      out.push(...Buffer.from(char, 'utf8'));
      i += char.length - 1;
      continue;
    }
    const next = text[++i] ?? '';
    const octal = /^[0-7]{1,3}/.exec(text.slice(i))?.[0];
    const unicode = /^(?:u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})/.exec(text.slice(i))?.[0];
    if (octal !== undefined) {
      out.push(parseInt(octal, 8));
      i += octal.length - 1;
    } else if (next === 'x' || next === 'X') {
      const hex = /^[0-9a-fA-F]{1,2}/.exec(text.slice(i + 1))?.[0] ?? '';
      out.push(parseInt(hex, 16));
      i += hex.length;
    } else if (unicode !== undefined) {
      let point = parseInt(unicode.slice(1), 16);
      i += unicode.length - 1;
      // A surrogate pair written as two \u escapes is one code point, as protoc joins it.
      const low = /^\\u(d[c-f][0-9a-f]{2})/i.exec(text.slice(i + 1))?.[1];
      if (point >= 0xd800 && point <= 0xdbff && low !== undefined) {
        point = 0x10000 + ((point - 0xd800) << 10) + (parseInt(low, 16) - 0xdc00);
        i += 6;
      }
      out.push(...Buffer.from(String.fromCodePoint(Math.min(point, 0x10ffff)), 'utf8'));
    } else {
      out.push(SIMPLE_ESCAPES[next] ?? next.charCodeAt(0));
    }
  }
  return out;
}
