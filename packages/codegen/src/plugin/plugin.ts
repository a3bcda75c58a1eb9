import { InvalidOptionError } from '@granary/core';
import { generateModules, warningLine } from '../generator/generate';
import type { GeneratorOptions } from '../generator/options';
import { modelFromDescriptors } from '../model/from-descriptors';
import type { FileDescriptorObject } from '../model/from-descriptors';
import { pluginMessages } from './plugin-messages';

/** CodeGeneratorResponse.Feature.FEATURE_PROTO3_OPTIONAL: we handle proto3 `optional`. */
const FEATURE_PROTO3_OPTIONAL = 1;

interface RequestObject {
  fileToGenerate?: string[];
  parameter?: string;
  protoFile?: FileDescriptorObject[];
}

/**
 * The whole plugin as a function: CodeGeneratorRequest bytes in, CodeGeneratorResponse bytes
 * out, warnings (streaming rpcs left out) to `warn`, one line each, as the bin prints them on
 * stderr (protoc shows a plugin's stderr). Every failure (bad parameter, unsupported construct,
 * even a malformed request) becomes the response's `error`, which protoc prints with the file
 * name; nothing throws.
 */
export function runPlugin(
  input: Uint8Array,
  warn: (line: string) => void = () => undefined,
): Uint8Array {
  const { request, response } = pluginMessages();
  let body: Record<string, unknown>;
  try {
    const req = request.toObject(request.decode(input), {
      enums: String,
      longs: String,
      arrays: true,
    }) as RequestObject;
    const options = parsePluginParameter(req.parameter ?? '');
    const model = modelFromDescriptors(req.protoFile ?? [], req.fileToGenerate ?? []);
    const { files, warnings } = generateModules(model, options);
    for (const warning of warnings) warn(warningLine(warning));
    body = {
      supportedFeatures: FEATURE_PROTO3_OPTIONAL,
      file: files.map((f) => ({ name: f.name, content: f.content })),
    };
  } catch (err) {
    body = { supportedFeatures: FEATURE_PROTO3_OPTIONAL, error: errorText(err) };
  }
  return response.encode(response.fromObject(body)).finish();
}

/**
 * `--granary_opt=import_extension=.js`: comma-separated `key=value` pairs. Unknown keys are an
 * error rather than ignored, so a typo does not silently change nothing.
 */
export function parsePluginParameter(parameter: string): Partial<GeneratorOptions> {
  const options: Partial<GeneratorOptions> = {};
  for (const pair of parameter.split(',').filter((p) => p.trim() !== '')) {
    const eq = pair.indexOf('=');
    const key = (eq < 0 ? pair : pair.slice(0, eq)).trim();
    const value = eq < 0 ? '' : pair.slice(eq + 1).trim();
    if (key === 'import_extension') {
      options.importExtension = checkImportExtension(value, '--granary_opt=import_extension');
    } else {
      throw new InvalidOptionError(
        `--granary_opt=${key}`,
        `unknown; supported: import_extension=<'' | .js | .ts>`,
      );
    }
  }
  return options;
}

/**
 * The import extension must be empty, `.js` or `.ts`. The modules are `.granary.ts` files, and
 * TypeScript resolves `./x.granary.js` to them but `./x.granary.mjs` (or `.cjs`) only to a
 * `.mts` (`.cts`) file that is never written, so those two would make every import fail.
 */
export function checkImportExtension(value: string, option: string): string {
  if (!['', '.js', '.ts'].includes(value)) {
    throw new InvalidOptionError(
      option,
      `must be '', .js or .ts (the generated modules are .granary.ts files), got "${value}"`,
    );
  }
  return value;
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return `${typeof code === 'string' ? `${code}: ` : ''}${err.message}`;
  }
  return String(err);
}
