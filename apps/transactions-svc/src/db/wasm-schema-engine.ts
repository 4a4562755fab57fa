// Loads Prisma's official WASM schema engine (@prisma/schema-engine-wasm) once per process.
// Its package entry imports the .wasm as an ES module, which Node 20 cannot do without a flag, so we
// instantiate the wasm-bindgen glue (`schema_engine_bg.js`) with the .wasm beside it ourselves.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
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

// The glue reads the registry from its own realm's global, which under Jest is not the sandbox's
// globalThis: reach that realm through its Function constructor.
function installPanicRegistry(glue: Glue): void {
  const glueRealm = (glue.SchemaEngine.constructor as FunctionConstructor)('return globalThis')() as typeof registryHolder;
  const registry: PanicRegistry = {
    set_message(message: string) {
      this.last = message;
    },
  };
  glueRealm.PRISMA_WASM_PANIC_REGISTRY ??= registry;
  registryHolder.PRISMA_WASM_PANIC_REGISTRY ??= glueRealm.PRISMA_WASM_PANIC_REGISTRY;
}

let loaded: typeof Bindings.SchemaEngine | undefined;

export function schemaEngineClass(): typeof Bindings.SchemaEngine {
  if (loaded) return loaded;
  // The glue is an ES module. Node's own require loads it (require(esm), on by default since
  // Node 20.19); a plain `require` would go through Jest's module registry, which cannot.
  const nodeRequire = createRequire(__filename);
  const gluePath = nodeRequire.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
  const glue = nodeRequire(gluePath) as Glue;
  installPanicRegistry(glue);
  const wasmModule = new Wasm.Module(readFileSync(path.join(path.dirname(gluePath), 'schema_engine_bg.wasm')));
  const instance = new Wasm.Instance(wasmModule, { './schema_engine_bg.js': withUnrefTimers(glue) });
  glue.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();
  loaded = glue.SchemaEngine;
  return loaded;
}
