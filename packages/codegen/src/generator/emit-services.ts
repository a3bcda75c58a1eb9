import type { FileModel, MethodModel, ServiceModel } from '../model/model';
import type { FileScope } from './file-scope';
import { kindHelperName, methodName, quote } from './names';
import { distinctName } from './type-names';

/** The kind of streaming of an rpc, or undefined for a unary one. */
function streaming(m: MethodModel): string | undefined {
  if (m.clientStreaming && m.serverStreaming) return 'bidi streaming';
  if (m.clientStreaming) return 'client streaming';
  if (m.serverStreaming) return 'server streaming';
  return undefined;
}

/**
 * The one warning about a file's streaming rpcs (every one named), or undefined when it has
 * none. Both commands print exactly this text.
 */
export function streamingWarning(file: FileModel): string | undefined {
  const rpcs = file.services.flatMap((s) =>
    s.methods.flatMap((m) => {
      const kind = streaming(m);
      return kind === undefined ? [] : [`${s.fullName}.${m.name} (${kind})`];
    }),
  );
  if (rpcs.length === 0) return undefined;
  return (
    `${file.name}: ${rpcs.length === 1 ? 'streaming rpc' : `${rpcs.length} streaming rpcs`} ` +
    `left out of the generated grain and client (grain calls are unary; a call answers ` +
    `UnimplementedError): ${rpcs.join(', ')}`
  );
}

/** Dispatch table, grain base class, client class and kind helper of one service. */
export function emitService(service: ServiceModel, scope: FileScope): string[] {
  const grain = scope.declare(`${service.name}Grain`);
  const client = scope.declare(`${service.name}Client`);
  const helper = scope.declare(kindHelperName(service.name));
  const table = `$${service.name}Service`;
  const omitted = service.methods.filter((m) => streaming(m) !== undefined).map((m) => m.name);
  // rpcs Get and get (or Then and then_) would share a method: the later one gets a `_` more.
  const names = new Set<string>();
  const methods = service.methods
    .filter((m) => streaming(m) === undefined)
    .map((m) => ({
      model: m,
      path: `${service.fullName}/${m.name}`,
      name: distinctName(methodName(m.name), names),
      req: scope.typeRef(m.inputType),
      res: scope.typeRef(m.outputType),
      reqCodec: scope.codecRef(m.inputType),
      resCodec: scope.codecRef(m.outputType),
    }));
  return [
    `/** Dispatch table of service \`${service.fullName}\`: method identity → grain method. */`,
    `const ${table} = $rt.defineService<${grain}, $GrainContext>(${quote(service.fullName)}, [`,
    ...methods.map(
      (m) =>
        `  $rt.method(${quote(m.path)}, ${m.reqCodec}, ${m.resCodec}, (grain, request, ctx) => grain.${m.name}(request, ctx)),`,
    ),
    ']);',
    '',
    '/**',
    ` * Grain base class of service \`${service.fullName}\`: extend it, override the rpcs, and`,
    ` * register it with \`${helper}(() => new My${service.name}())\`. An rpc left out answers`,
    ' * `UnimplementedError` to its caller; other messages go to `receiveDefault(ctx)`.',
    ...(omitted.length === 0
      ? []
      : [
          ` * Streaming rpcs, left out (a call answers \`UnimplementedError\`): ${omitted.join(', ')}.`,
        ]),
    ' */',
    `export abstract class ${grain}<$State = unknown> extends $rt.GrainBase<$GrainContext, $State> {`,
    '  /** The kind name grains of this service are registered under. */',
    `  static readonly kindName = ${quote(service.fullName)};`,
    `  protected readonly $service = ${table};`,
    ...methods.flatMap((m) => [
      '',
      `  /** rpc \`${m.model.name}\` (\`${m.path}\`). */`,
      `  ${m.name}(_request: ${m.req}, _ctx: $GrainContext): Promise<$rt.MessageInit<${m.res}>> | $rt.MessageInit<${m.res}> {`,
      `    return $rt.unimplemented(${quote(m.path)});`,
      '  }',
    ]),
    '}',
    '',
    '/**',
    ` * Typed client of service \`${service.fullName}\`:`,
    ` * \`${client}.for(cluster, identity).${methods[0]?.name ?? 'method'}(request, { timeoutMs, idempotent })\`.`,
    ' */',
    `export class ${client} extends $rt.GrainClient {`,
    '  /** A client of grain `identity` (of kind `kindName`); creating one sends nothing. */',
    `  static for(cluster: $rt.ClusterLike, identity: string, kindName: string = ${table}.kindName): ${client} {`,
    `    return new ${client}(cluster, kindName, identity);`,
    '  }',
    '',
    `  /** @deprecated Use \`${client}.for\` (same arguments). */`,
    `  static get(cluster: $rt.ClusterLike, identity: string, kindName: string = ${table}.kindName): ${client} {`,
    `    return new ${client}(cluster, kindName, identity);`,
    '  }',
    ...methods.flatMap((m) => [
      '',
      `  /** rpc \`${m.model.name}\` (\`${m.path}\`). */`,
      `  ${m.name}(request: $rt.MessageInit<${m.req}>, options?: $rt.CallOptions): Promise<${m.res}> {`,
      `    return this.$invoke(${quote(m.path)}, ${m.reqCodec}, ${m.resCodec}, request, options);`,
      '  }',
    ]),
    '}',
    '',
    `/**`,
    ` * The kind of service \`${service.fullName}\`, for \`Cluster.start({ kinds: [...] })\`;`,
    ' * `options.state` declares the state of its grains (`$State`, their `this.state`).',
    ' */',
    `export function ${helper}<$State = unknown>(`,
    `  factory: () => ${grain}<$State>,`,
    '  options?: $KindOptions<$State>,',
    '): ReturnType<typeof $kind> {',
    `  return $kind(${table}.kindName, factory, options ?? {});`,
    '}',
    '',
  ];
}
