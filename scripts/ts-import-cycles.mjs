// Import cycles among the TypeScript sources of one folder, type-only imports included: a cycle
// that `import type` hides from the compiled JS still ties the files together for a reader and
// for the compiler. Parses each file with the TypeScript compiler API (syntax only, no program).
import ts from 'typescript';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** Every .ts file under `dir` (not .d.ts), absolute paths. */
function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The file a relative specifier names (`./x` -> x.ts or x/index.ts; `./x.js` -> x.ts). */
function resolveSpecifier(from, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier.replace(/\.(c|m)?js$/, ''));
  for (const candidate of [`${base}.ts`, join(base, 'index.ts')]) {
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** True when an import or export declaration brings in types only (erased from the JS). */
function typeOnly(node) {
  if (ts.isImportDeclaration(node)) {
    const clause = node.importClause;
    if (!clause) return false;
    if (clause.isTypeOnly) return true;
    if (clause.name) return false;
    const bindings = clause.namedBindings;
    return (
      bindings !== undefined &&
      ts.isNamedImports(bindings) &&
      bindings.elements.length > 0 &&
      bindings.elements.every((e) => e.isTypeOnly)
    );
  }
  if (ts.isExportDeclaration(node)) {
    if (node.isTypeOnly) return true;
    const clause = node.exportClause;
    return (
      clause !== undefined &&
      ts.isNamedExports(clause) &&
      clause.elements.length > 0 &&
      clause.elements.every((e) => e.isTypeOnly)
    );
  }
  return false;
}

/** The relative imports of one file: `{ to, typeOnly }`, one per target (value wins). */
function importsOf(file) {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const edges = new Map();
  const add = (specifier, isType) => {
    const to = resolveSpecifier(file, specifier);
    if (to === undefined || to === file) return;
    edges.set(to, (edges.get(to) ?? true) && isType);
  };
  const visit = (node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      add(node.moduleSpecifier.text, typeOnly(node));
    } else if (ts.isImportTypeNode(node)) {
      // `import('./x').Y` in a type position.
      const arg = node.argument;
      if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) add(arg.literal.text, true);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      add(node.arguments[0].text, false);
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      add(node.moduleReference.expression.text, node.isTypeOnly);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return [...edges].map(([to, isType]) => ({ to, typeOnly: isType }));
}

/** Strongly connected components with more than one file (Tarjan), each sorted. */
function components(graph) {
  let index = 0;
  const stack = [];
  const on = new Set();
  const idx = new Map();
  const low = new Map();
  const out = [];
  const strong = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const { to } of graph.get(v) ?? []) {
      if (!idx.has(to)) {
        strong(to);
        low.set(v, Math.min(low.get(v), low.get(to)));
      } else if (on.has(to)) low.set(v, Math.min(low.get(v), idx.get(to)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) strong(v);
  return out;
}

/** One shortest cycle through `start` inside `members`, as a list of edges. */
function cycleThrough(graph, start, members) {
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const edge of graph.get(v) ?? []) {
      if (!members.has(edge.to)) continue;
      if (edge.to === start) {
        const path = [{ from: v, ...edge }];
        for (let p = previous.get(v); p !== null; p = previous.get(p.from)) path.unshift(p);
        return path;
      }
      if (!previous.has(edge.to)) {
        previous.set(edge.to, { from: v, ...edge });
        queue.push(edge.to);
      }
    }
  }
  return [];
}

/**
 * The import cycles among the .ts files under `dir`: one entry per group of files that import
 * each other (a strongly connected component), with its files relative to `root` and one
 * shortest cycle through its first file, each step marked when it is a type-only import.
 */
export function tsImportCycles(dir, root = process.cwd()) {
  const graph = new Map();
  for (const file of sourceFiles(resolve(dir))) graph.set(file, importsOf(file));
  const values = new Map([...graph].map(([f, edges]) => [f, edges.filter((e) => !e.typeOnly)]));
  const valueCycles = components(values);
  return components(graph).map((scc) => {
    const cycle = cycleThrough(graph, scc[0], new Set(scc));
    const name = (f) => relative(root, f);
    return {
      files: scc.map(name),
      // No cycle left among these files once type-only imports are dropped: the JS has none.
      typeOnly: !valueCycles.some((v) => v.every((f) => scc.includes(f))),
      path:
        cycle.map((e) => `${name(e.from)} -${e.typeOnly ? '(type)' : ''}-> `).join('') +
        name(scc[0]),
    };
  });
}
