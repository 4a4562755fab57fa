// Loads Prisma's official WASM schema engine (@prisma/schema-engine-wasm) once per process.
// Its package entry imports the .wasm as an ES module, which Node 20 cannot do without a flag, so we
// instantiate the wasm-bindgen glue (`schema_engine_bg.js`) with the .wasm beside it ourselves.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type * as Bindings from '@prisma/schema-engine-wasm/schema_engine_bg';

export type { SchemaEngine } from '@prisma/schema-engine-wasm/schema_engine_bg';
type WasmImports = Record<string, Record<string, unknown>>;
type Glue = typeof Bindings & { __wbg_set_wasm(exports: Record<string, unknown>): void };
// The ES2023 lib and @types/node 20 do not declare WebAssembly; this is the part we use.
const { WebAssembly: Wasm } = globalThis as unknown as {
  WebAssembly: {
    Module: new (bytes: Uint8Array) => object;
    Instance: new (module: object, imports: WasmImports) => { exports: Record<string, unknown> };
  };
};

// The engine arms a 10 s JS timer per advisory-lock wait (its lock timeout) and never clears it:
// wasm-bindgen imports no clearTimeout. Left as is, each deploy keeps the process (or a Jest worker)
// alive 10 s after the work is done, so the timers are unref'd: open pg sockets keep the process
// alive while the engine really waits.
function withUnrefTimers(glue: Glue): Record<string, unknown> {
  const imports: Record<string, unknown> = { ...glue };
  for (const [name, value] of Object.entries(glue)) {
    if (!name.startsWith('__wbg_setTimeout_') || typeof value !== 'function') continue;
    imports[name] = (...args: unknown[]) => {
      const timer = (value as (...a: unknown[]) => unknown)(...args);
      (timer as { unref?: () => void } | null)?.unref?.();
      return timer;
    };
  }
  return imports;
}

// wasm-bindgen's panic hook hands the panic message to this global before the wasm traps; keep
// the last one so a trap ("unreachable") can be reported with what the engine actually said.
type PanicRegistry = { set_message(message: string): void; last?: string };
const registryHolder = globalThis as { PRISMA_WASM_PANIC_REGISTRY?: PanicRegistry };

/** The message of the engine's most recent panic, if any. */
export function lastEnginePanic(): string | undefined {
  return registryHolder.PRISMA_WASM_PANIC_REGISTRY?.last;
}

// The glue (`schema_engine_bg.js`) is an ES module of plain `export function` / `export class`
// declarations with no imports. Node's require(esm) could load it, but Jest's module registry
// cannot (it also intercepts createRequire and getBuiltinModule), so it is evaluated here as a
// function body returning its exports: one loading path for node, esbuild bundles and Jest.
function evaluateGlue(source: string): Glue {
  if (/^\s*import\s/m.test(source) || /^export\s+(?!function\s|class\s)/m.test(source)) {
    throw new Error('@prisma/schema-engine-wasm glue has an unexpected module shape; update libs/db/src/migrations/wasm-schema-engine.ts');
  }
  const names = [...source.matchAll(/^export\s+(?:function|class)\s+([A-Za-z0-9_$]+)/gm)].map((match) => match[1]!);
  const body = `"use strict";\n${source.replace(/^export\s+(?=function\s|class\s)/gm, '')}\nreturn { ${names.join(', ')} };`;
  return new Function(body)() as Glue;
}

let loaded: typeof Bindings.SchemaEngine | undefined;

export function schemaEngineClass(): typeof Bindings.SchemaEngine {
  if (loaded) return loaded;
  registryHolder.PRISMA_WASM_PANIC_REGISTRY ??= {
    set_message(message: string) {
      this.last = message;
    },
  };
  const gluePath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
  const glue = evaluateGlue(readFileSync(gluePath, 'utf8'));
  const wasmModule = new Wasm.Module(readFileSync(path.join(path.dirname(gluePath), 'schema_engine_bg.wasm')));
  const instance = new Wasm.Instance(wasmModule, { './schema_engine_bg.js': withUnrefTimers(glue) });
  glue.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();
  loaded = glue.SchemaEngine;
  return loaded;
}
