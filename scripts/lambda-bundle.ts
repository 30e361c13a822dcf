/**
 * The deployment as SST would build it, without the `sst` CLI (it cannot download its providers
 * here): sst.config.ts evaluated against stand-ins for SST's globals, and the API function
 * bundled with esbuild using the function's own `nodejs` options. Shared by the deploy test
 * (test/deploy/sst-config.test.ts) and the cold-start bench (bench/coldstart.ts), so both measure
 * the same artefact.
 */
import { cpSync, readFileSync } from 'node:fs'
import { join, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import vm from 'node:vm'
import { build, type Metafile, transform } from 'esbuild'

export const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))
export const CONFIG_PATH = join(ROOT, 'sst.config.ts')

/** A recorded `new sst.<ns>.<Kind>(name, args)`. */
export class Component {
  constructor(
    readonly kind: string,
    readonly name: string,
    readonly args: Record<string, any>,
  ) {}
  /** Outputs are plain strings here, tagged with the component they came from. */
  get url() {
    return `output:${this.name}.url`
  }
  get arn() {
    return `output:${this.name}.arn`
  }
  get value() {
    return `output:${this.name}.value`
  }
  get nodes() {
    return {}
  }
  /** ApiGatewayV2-style routes, should the config switch to a gateway. */
  readonly routes: { route: string; handler: unknown; args?: unknown }[] = []
  route(route: string, handler: unknown, args?: unknown) {
    this.routes.push({ route, handler, args })
    return this
  }
}

export interface EvaluatedConfig {
  app: (input: { stage: string }) => Record<string, any>
  outputs: Record<string, unknown>
  components: Component[]
  byKind: (kind: string) => Component[]
}

/** Transpiles sst.config.ts with esbuild and runs it in a VM context holding the stand-ins. */
export async function evaluateSstConfig(): Promise<EvaluatedConfig> {
  const source = readFileSync(CONFIG_PATH, 'utf8')
  const { code } = await transform(source, { loader: 'ts', format: 'cjs', target: 'node20', sourcefile: 'sst.config.ts' })
  const components: Component[] = []
  const namespace = (ns: string): unknown =>
    new Proxy(
      {},
      {
        get(_t, prop) {
          if (typeof prop !== 'string') return undefined
          const kind: string = prop
          if (kind === 'aws' || kind === 'cloudflare') return namespace(`${ns}.${kind}`)
          // Any component kind: `new sst.aws.Whatever(name, args)` is recorded.
          return class extends Component {
            constructor(name: string, args: Record<string, any> = {}) {
              super(`${ns}.${kind}`, name, kind === 'Secret' ? { placeholder: args } : args)
              components.push(this)
            }
          }
        },
      },
    )
  const module = { exports: {} as Record<string, any> }
  const interpolate = (strings: TemplateStringsArray, ...values: unknown[]) =>
    strings.reduce((acc, s, i) => acc + s + (i < values.length ? String(values[i]) : ''), '')
  const context = vm.createContext({
    module,
    exports: module.exports,
    $config: (config: unknown) => config,
    sst: namespace('sst'),
    $app: { name: 'server-tools', stage: 'test', removal: 'remove', protect: false, providers: {} },
    $dev: false,
    $interpolate: interpolate,
    $concat: (...parts: unknown[]) => parts.join(''),
    $jsonStringify: JSON.stringify,
    $resolve: (v: unknown) => v,
    $output: (v: unknown) => v,
    process: { env: {} },
    console,
  })
  vm.runInContext(code, context, { filename: CONFIG_PATH })
  const config = module.exports.default as { app: EvaluatedConfig['app']; run: () => Promise<Record<string, unknown> | undefined> }
  const outputs = (await config.run()) ?? {}
  return { app: config.app, outputs, components, byKind: (kind) => components.filter((c) => c.kind === kind) }
}

/** `functions/api.handler` → [`functions/api`, `handler`]. */
export function splitHandler(handler: string): [file: string, exported: string] {
  const dot = handler.lastIndexOf('.')
  return [handler.slice(0, dot).split('/').join(sep), handler.slice(dot + 1)]
}

/**
 * esbuild with the function's `nodejs` options (format, banner, minify, splitting), and SST's
 * `install` packages copied beside the bundle. The entry lands in `dir` as `<name>.mjs`; with
 * splitting, its lazily imported chunks land beside it. Returns the entry's path and the metafile.
 */
export async function bundleLikeSst(
  fn: Component,
  entry: string,
  dir: string,
  name: string,
): Promise<{ outfile: string; metafile: Metafile }> {
  const nodejs = fn.args.nodejs ?? {}
  const result = await build({
    entryPoints: { [name]: entry },
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    entryNames: '[name]',
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: Boolean(nodejs.splitting),
    platform: 'node',
    target: fn.args.runtime === 'nodejs20.x' ? 'node20' : 'node22',
    format: nodejs.format ?? 'esm',
    banner: { js: nodejs.banner ?? '' },
    minify: nodejs.minify ?? true,
    mainFields: ['module', 'main'],
    external: nodejs.install ?? [],
    metafile: true,
    logLevel: 'silent',
    // SST's passthrough of further esbuild options
    ...(nodejs.esbuild ?? {}),
  })
  for (const pkg of withDependencies((nodejs.install ?? []) as string[]))
    cpSync(join(ROOT, 'node_modules', pkg), join(dir, 'node_modules', pkg), { recursive: true, dereference: true })
  return { outfile: join(dir, `${name}.mjs`), metafile: result.metafile as Metafile }
}

/** The packages and, like `npm install` would bring them, their dependencies (node_modules is flat here). */
function withDependencies(packages: string[]): string[] {
  const all = new Set<string>()
  const visit = (pkg: string) => {
    if (all.has(pkg)) return
    all.add(pkg)
    const manifest = JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>
    }
    for (const dep of Object.keys(manifest.dependencies ?? {})) visit(dep)
  }
  packages.forEach(visit)
  return [...all]
}

/** The output file (entry or chunk) that holds a source module, e.g. the sandbox's worker entry. */
export function outputHolding(metafile: Metafile, source: string): string | undefined {
  const key = Object.keys(metafile.outputs).find(
    (out) => out.endsWith('.mjs') && Object.keys(metafile.outputs[out].inputs).some((input) => resolve(input) === resolve(ROOT, source)),
  )
  return key === undefined ? undefined : resolve(key)
}

/** The Api function's bundle plus its copyFiles, ready to load from `dir` as Lambda would. */
/** `root`: another checkout's sources, bundled with this one's config and packages (the cold-start bench's baseline). */
export async function buildApiLikeSst(
  cfg: EvaluatedConfig,
  dir: string,
  root = ROOT,
): Promise<{ outfile: string; exported: string; metafile: Metafile; fn: Component }> {
  const fn = cfg.byKind('sst.aws.Function').find((f) => f.name === 'Api')
  if (!fn) throw new Error('sst.config.ts declares no Api function')
  const [file, exported] = splitHandler(fn.args.handler)
  const { outfile, metafile } = await bundleLikeSst(fn, join(root, `${file}.ts`), dir, file.split(sep).pop()!)
  for (const { from, to } of (fn.args.copyFiles ?? []) as { from: string; to?: string }[])
    cpSync(join(root, from), join(dir, to ?? from), { recursive: true })
  return { outfile, exported, metafile, fn }
}

/** What importing the handler loads: the entry and every chunk it imports statically, transitively. */
export function loadedAtStart(metafile: Metafile, outfile: string): { kib: number; files: number } {
  const byPath = new Map(Object.entries(metafile.outputs).map(([f, o]) => [resolve(f), o]))
  const seen = startSet(metafile, outfile)
  return { kib: [...seen].reduce((n, f) => n + byPath.get(f)!.bytes / 1024, 0), files: seen.size }
}

/** What the start set imports from outside the bundle as ES modules: Node's built-ins and the packages beside it. */
export function externalImportsAtStart(metafile: Metafile, outfile: string): string[] {
  const byPath = new Map(Object.entries(metafile.outputs).map(([f, o]) => [resolve(f), o]))
  const external = [...startSet(metafile, outfile)].flatMap((f) =>
    byPath
      .get(f)!
      .imports.filter((i) => i.external && i.kind === 'import-statement')
      .map((i) => i.path),
  )
  return [...new Set(external)].sort()
}

/** The output files a cold start loads: the entry and what it imports statically, transitively. */
function startSet(metafile: Metafile, outfile: string): Set<string> {
  const byPath = new Map(Object.entries(metafile.outputs).map(([f, o]) => [resolve(f), o]))
  const seen = new Set<string>()
  const visit = (f: string) => {
    if (seen.has(f) || !byPath.has(f)) return
    seen.add(f)
    for (const i of byPath.get(f)!.imports) if (i.kind === 'import-statement' && !i.external) visit(resolve(i.path))
  }
  visit(resolve(outfile))
  return seen
}
