import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GranaryError, InvalidArgumentError, InvalidOptionError } from '@granary/core';
import { generateModules, warningLine } from '../generator/generate';
import { loadProtoFiles } from '../model/from-proto-files';
import { checkImportExtension } from '../plugin/plugin';

/** Where the CLI writes its messages (stdout/stderr in the bin, buffers in tests). */
export interface CliOutput {
  out(text: string): void;
  err(text: string): void;
}

/** Parsed command line of `granary-codegen`. */
export interface CliArguments {
  files: string[];
  outDir: string;
  includeDirs: string[];
  importExtension: string;
}

const USAGE = `usage: granary-codegen <file.proto...> --out <dir> [-I <dir>]... [--import-extension .js]

  --out, -o <dir>            where to write <name>.granary.ts files (required)
  --proto_path, -I <dir>     include directory for imports, repeatable (default: .)
  --import-extension <ext>   extension on relative imports: '' (CommonJS, default) or .js (ESM)
`;

/** Parses `argv` (without node and script); throws core's `InvalidOptionError` (or `InvalidArgumentError` for missing files) with the usage on misuse. */
export function parseCliArguments(argv: readonly string[]): CliArguments {
  const args: CliArguments = { files: [], outDir: '', includeDirs: [], importExtension: '' };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? arg.split(/=(.*)/s) : [arg];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new InvalidOptionError(flag, `needs a value\n${USAGE}`);
      return v;
    };
    if (flag === '--out' || flag === '-o') args.outDir = value();
    else if (flag === '--proto_path' || flag === '-I') args.includeDirs.push(value());
    else if (flag.startsWith('-I') && flag.length > 2) args.includeDirs.push(flag.slice(2));
    else if (flag === '--import-extension') {
      args.importExtension = checkImportExtension(value(), '--import-extension');
    } else if (flag.startsWith('-')) throw new InvalidOptionError(flag, `unknown option\n${USAGE}`);
    else args.files.push(arg);
  }
  if (args.files.length === 0)
    throw new InvalidArgumentError('files', `no .proto files given\n${USAGE}`);
  if (args.outDir === '') throw new InvalidOptionError('--out', `<dir> is required\n${USAGE}`);
  if (args.includeDirs.length === 0) args.includeDirs.push('.');
  return args;
}

/**
 * `granary-codegen`: parses the files with protobufjs and writes one module per file, exactly
 * what protoc with protoc-gen-granary writes. Returns the exit code; codegen errors are printed
 * as one line (code and message), never a stack trace.
 *
 * @example
 * runCli(['protos/ponger.proto', '-I', 'protos', '--out', 'src/gen'], consoleOutput);
 */
export function runCli(argv: readonly string[], output: CliOutput): number {
  if (argv.includes('--help') || argv.includes('-h')) {
    output.out(USAGE);
    return 0;
  }
  try {
    const args = parseCliArguments(argv);
    const request = loadProtoFiles(args.files, { includeDirs: args.includeDirs });
    const { files, warnings } = generateModules(request, {
      importExtension: args.importExtension,
    });
    for (const warning of [...(request.warnings ?? []), ...warnings]) {
      output.err(warningLine(warning));
    }
    for (const file of files) {
      const path = join(args.outDir, file.name);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, file.content);
      output.out(`wrote ${path}\n`);
    }
    return 0;
  } catch (err) {
    if (GranaryError.is(err)) {
      output.err(`granary-codegen: ${err.code}: ${err.message}\n`);
      return 1;
    }
    const e = err as { code?: unknown; message?: unknown };
    output.err(
      `granary-codegen: ${String(e.code ?? 'ERR_CODEGEN')}: ${String(e.message ?? err)}\n`,
    );
    return 1;
  }
}
