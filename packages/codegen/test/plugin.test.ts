import { expect } from 'chai';
import { InvalidOptionError } from '@granary/core';
import { parsePluginParameter, runPlugin } from '../src/plugin/plugin';
import { pluginMessages } from '../src/plugin/plugin-messages';

interface ResponseObject {
  error?: string;
  supportedFeatures?: string;
  file?: { name: string; content: string }[];
}

const { request, response } = pluginMessages();

function call(body: Record<string, unknown>): ResponseObject {
  const input = request.encode(request.fromObject(body)).finish();
  return decode(runPlugin(input));
}

function decode(bytes: Uint8Array): ResponseObject {
  return response.toObject(response.decode(bytes), { longs: String }) as ResponseObject;
}

const PING_FILE = {
  name: 'ping.proto',
  package: 'demo',
  syntax: 'proto3',
  messageType: [{ name: 'Ping', field: [{ name: 'n', number: 1, label: 1, type: 3 }] }],
  service: [
    {
      name: 'Pinger',
      method: [{ name: 'Ping', inputType: '.demo.Ping', outputType: '.demo.Ping' }],
    },
  ],
};

describe('runPlugin', () => {
  it('answers a CodeGeneratorRequest with one module per file_to_generate', () => {
    const res = call({ fileToGenerate: ['ping.proto'], protoFile: [PING_FILE] });
    expect(res.error).to.equal(undefined);
    expect(res.file?.map((f) => f.name)).to.deep.equal(['ping.granary.ts']);
    expect(res.file?.[0].content).to.contain('export interface Ping {\n  n: string;\n}');
    expect(res.file?.[0].content).to.contain("'demo.Pinger/Ping'");
  });

  it('declares proto3 optional support so protoc accepts optional fields', () => {
    expect(String(call({ fileToGenerate: [], protoFile: [] }).supportedFeatures)).to.equal('1');
  });

  it('reports a malformed request through the error field instead of throwing', () => {
    const res = decode(runPlugin(new Uint8Array([0x0a, 0xff, 0xff])));
    expect(res.error).to.be.a('string').and.not.equal('');
    expect(res.file ?? []).to.deep.equal([]);
  });

  it('reports an unknown --granary_opt through the error field', () => {
    const res = call({
      fileToGenerate: ['ping.proto'],
      protoFile: [PING_FILE],
      parameter: 'colour=red',
    });
    expect(res.error).to.contain('ERR_INVALID_OPTION').and.contain('colour');
    expect(res.file ?? []).to.deep.equal([]);
  });

  it('import_extension=.js adds the extension to imports between generated modules', () => {
    const dep = {
      name: 'dep.proto',
      package: 'demo',
      syntax: 'proto3',
      messageType: [{ name: 'Dep', field: [] }],
    };
    const user = {
      name: 'sub/user.proto',
      package: 'demo',
      syntax: 'proto3',
      dependency: ['dep.proto'],
      messageType: [
        {
          name: 'User',
          field: [{ name: 'd', number: 1, label: 1, type: 11, typeName: '.demo.Dep' }],
        },
      ],
    };
    const res = call({
      fileToGenerate: ['sub/user.proto'],
      protoFile: [dep, user],
      parameter: 'import_extension=.js',
    });
    expect(res.error).to.equal(undefined);
    expect(res.file?.[0].content).to.contain("import * as $dep from '../dep.granary.js';");
  });
});

describe('parsePluginParameter', () => {
  it('accepts an empty parameter', () => {
    expect(parsePluginParameter('')).to.deep.equal({});
  });

  it('rejects an import extension that is not a module extension', () => {
    expect(() => parsePluginParameter('import_extension=.exe')).to.throw(
      InvalidOptionError,
      /import_extension/,
    );
  });
});
