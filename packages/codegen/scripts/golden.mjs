// `npm run golden -w @granary/codegen`: rebuilds the generator and rewrites test/golden from
// every .proto under test/protos. The golden test then checks that both granary-codegen and
// protoc + protoc-gen-granary reproduce these files.
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const protos = join(pkg, 'test', 'protos');
const golden = join(pkg, 'test', 'golden');

execFileSync('npx', ['tsc', '-b', pkg], { stdio: 'inherit' });
const { runCli } = createRequire(import.meta.url)(join(pkg, 'dist', 'src', 'index.js'));

const inputs = readdirSync(protos, { recursive: true })
  .map(String)
  .filter((f) => f.endsWith('.proto'))
  .sort()
  .map((f) => relative(process.cwd(), join(protos, f)));

rmSync(golden, { recursive: true, force: true });
const code = runCli([...inputs, '-I', relative(process.cwd(), protos) || '.', '--out', golden], {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
});
process.exit(code);
