/**
 * The architecture as tests (DESIGN.md "Layout", EXAMPLES.md E8). Dependencies point one way:
 * functions/* → functions/http/* → lib/**. lib/ is the domain core: no hono, no sst, no AWS SDK
 * outside lib/stores/aws/, no process.env, no wall clock outside lib/runtime/clock.ts.
 *
 * Imports (`import`, `export … from`, `import()`, `require()`, type-only included) are read with
 * the TypeScript compiler; expression rules walk the syntax tree, so comments and strings never
 * count. Every failure names file:line.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)))

interface SourceFile {
  /** Repo-relative, with forward slashes. */
  file: string
  text: string
  ast: ts.SourceFile
}

interface Import {
  from: string
  line: number
  specifier: string
  /** Repo-relative target for relative specifiers that resolve to a file, else undefined. */
  target?: string
}

function walk(dir: string): string[] {
  if (!existsSync(dir)) return []
  const out: string[] = []
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue
    const full = join(dir, entry)
    if (statSync(full).isDirectory()) out.push(...walk(full))
    else if (/\.(ts|tsx|mts|cts|js|mjs)$/.test(entry) && !entry.endsWith('.d.ts')) out.push(full)
  }
  return out
}

const rel = (abs: string) => relative(ROOT, abs).split('\\').join('/')

const sources = new Map<string, SourceFile>()
/** A file of the repo, or (self-tests) a snippet registered under a made-up name. */
function source(file: string, snippet?: string): SourceFile {
  let s = snippet === undefined ? sources.get(file) : undefined
  if (!s) {
    const text = snippet ?? readFileSync(join(ROOT, file), 'utf8')
    s = {
      file,
      text,
      ast: ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS),
    }
    sources.set(file, s)
  }
  return s
}

const filesUnder = (...dirs: string[]) =>
  dirs
    .flatMap((d) => walk(join(ROOT, d)))
    .map(rel)
    .sort()

function resolveRelative(fromFile: string, specifier: string): string | undefined {
  const base = resolve(ROOT, dirname(fromFile), specifier)
  const stem = base.replace(/\.(js|mjs|cjs|ts)$/, '')
  for (const candidate of [
    base,
    `${stem}.ts`,
    `${stem}.tsx`,
    `${stem}.mts`,
    `${stem}.js`,
    join(base, 'index.ts'),
    join(base, 'index.js'),
  ]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return rel(candidate)
  }
  return rel(base)
}

const lineAt = (text: string, pos: number) => text.slice(0, pos).split('\n').length

function importsOf(file: string): Import[] {
  const text = sources.get(file)?.text ?? readFileSync(join(ROOT, file), 'utf8')
  const info = ts.preProcessFile(text, true, true)
  return info.importedFiles.map((f) => ({
    from: file,
    line: lineAt(text, f.pos),
    specifier: f.fileName,
    target: f.fileName.startsWith('.') ? resolveRelative(file, f.fileName) : undefined,
  }))
}

/** Nodes of a file for which `match` returns a description, as `file:line description`. */
function findInTree(file: string, match: (node: ts.Node) => string | undefined): string[] {
  const { ast } = source(file)
  const hits: string[] = []
  const visit = (node: ts.Node) => {
    const what = match(node)
    if (what) hits.push(`${file}:${ast.getLineAndCharacterOfPosition(node.getStart(ast)).line + 1} ${what}`)
    ts.forEachChild(node, visit)
  }
  visit(ast)
  return hits
}

const at = (i: Import, what: string) => `${i.from}:${i.line} ${what} '${i.specifier}'`
const isUnder = (file: string | undefined, dir: string) => !!file && (file === dir || file.startsWith(`${dir}/`))

const LIB = filesUnder('lib')
const FUNCTIONS = filesUnder('functions')
const EVERYTHING = filesUnder('lib', 'functions', 'test', 'bench')

/**
 * Violations present when the rule was written, each with the reason it is not fixed here. They are
 * matched by file and kind, not line, so edits around them do not break the suite; any new
 * violation fails, and an entry whose violation is gone fails too (so the list only shrinks).
 */
interface KnownViolation {
  file: string
  what: string
  why: string
}
const KNOWN_VIOLATIONS: KnownViolation[] = []
const matches = (violation: string, k: KnownViolation) =>
  violation.startsWith(`${k.file}:`) && violation.slice(violation.indexOf(' ') + 1) === k.what
const unlisted = (violations: string[]) => violations.filter((v) => !KNOWN_VIOLATIONS.some((k) => matches(v, k)))

const clockReads = (): string[] => LIB.filter((f) => f !== 'lib/runtime/clock.ts').flatMap(clockReadsIn)

function clockReadsIn(file: string): string[] {
  return findInTree(file, (node) => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression
      if (
        ts.isPropertyAccessExpression(callee) &&
        callee.name.text === 'now' &&
        ts.isIdentifier(callee.expression) &&
        callee.expression.text === 'Date'
      )
        return 'calls Date.now()'
      if (ts.isIdentifier(callee) && callee.text === 'Date') return 'calls Date() (the current time)'
    }
    if (
      ts.isNewExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'Date' &&
      (node.arguments?.length ?? 0) === 0
    )
      return 'calls new Date() (the current time)'
    return undefined
  })
}

const isProcess = (e: ts.Expression) =>
  (ts.isIdentifier(e) && e.text === 'process') || (ts.isPropertyAccessExpression(e) && e.name.text === 'process')

function envReads(file: string): string[] {
  return [
    ...findInTree(file, (node) => {
      // process.env, globalThis.process.env, process['env']
      if (ts.isPropertyAccessExpression(node) && node.name.text === 'env' && isProcess(node.expression)) return 'reads process.env'
      if (
        ts.isElementAccessExpression(node) &&
        ts.isStringLiteralLike(node.argumentExpression) &&
        node.argumentExpression.text === 'env' &&
        isProcess(node.expression)
      )
        return 'reads process.env'
      // const { env } = process
      if (ts.isVariableDeclaration(node) && ts.isObjectBindingPattern(node.name) && node.initializer && isProcess(node.initializer)) {
        if (node.name.elements.some((e) => (e.propertyName ?? e.name).getText() === 'env')) return 'destructures env from process'
      }
      return undefined
    }),
    // import { env } from 'node:process'
    ...importsOf(file)
      .filter((i) => i.specifier === 'process' || i.specifier === 'node:process')
      .filter((i) => /\benv\b/.test(source(file).text.split('\n')[i.line - 1] ?? ''))
      .map((i) => at(i, 'imports env from')),
  ]
}

/**
 * lib/'s folders from the bottom up. A file may import its own folder and the layers at or below
 * its own; reaching up (e.g. lib/sandbox importing lib/tools for a shared type) fails. Shared
 * types live in the lowest layer that owns them (lib/calls: a call's outcome; lib/config: JSON
 * Schema and the server-tool config; lib/documents: the cascade reader). lib/stores/ holds the
 * adapters of every layer's ports and is checked by the other rules, not ranked here.
 */
const LIB_LAYERS: readonly (readonly string[])[] = [
  ['lib/errors.ts', 'lib/runtime', 'lib/calls'],
  ['lib/config', 'lib/documents', 'lib/secrets', 'lib/audit', 'lib/quotas'],
  ['lib/egress'],
  ['lib/models', 'lib/llm', 'lib/mcp', 'lib/sandbox'],
  ['lib/tools'],
  ['lib/usage', 'lib/recipes', 'lib/surface'],
  // configuration as code: plans and validation of a whole layer, over every feature's checks
  ['lib/layers'],
]
const UNRANKED = ['lib/stores']

/** The layer index of a lib/ file, or undefined for unranked folders. */
function layerOf(file: string): number | undefined {
  const i = LIB_LAYERS.findIndex((layer) => layer.some((entry) => isUnder(file, entry)))
  return i < 0 ? undefined : i
}

function upwardImports(files: readonly string[]): string[] {
  return files.flatMap(importsOf).flatMap((i) => {
    const from = layerOf(i.from)
    const to = i.target && isUnder(i.target, 'lib') ? layerOf(i.target) : undefined
    if (from === undefined || to === undefined || to <= from) return []
    return [at(i, `reaches up from layer ${from} to layer ${to}:`)]
  })
}

/**
 * Request headers are read through functions/http/headers.ts: on @hono/node-server, `c.req.header`
 * and `c.req.raw.headers` build a whole web Headers for the request (~16 µs of a tool call's CPU).
 */
function webHeaderReads(file: string): string[] {
  const onReq = (e: ts.Expression) => ts.isPropertyAccessExpression(e) && e.name.text === 'req'
  return findInTree(file, (node) => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const callee = node.expression
      if (callee.name.text === 'header' && onReq(callee.expression)) return 'calls c.req.header (use headerOf)'
    }
    if (
      ts.isPropertyAccessExpression(node) &&
      node.name.text === 'headers' &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === 'raw' &&
      onReq(node.expression.expression)
    )
      return 'reads c.req.raw.headers (use headerOf)'
    return undefined
  })
}

/**
 * Route answers are rendered through functions/http/json-answer.ts: `c.json` is one
 * JSON.stringify and one write however large the answer (issue 21 D2, D3: a megabyte at once).
 */
function wholeJsonAnswers(file: string): string[] {
  return findInTree(file, (node) =>
    ts.isCallExpression(node) &&
    ts.isPropertyAccessExpression(node.expression) &&
    node.expression.name.text === 'json' &&
    ts.isIdentifier(node.expression.expression) &&
    node.expression.expression.text === 'c'
      ? 'calls c.json (use jsonAnswer)'
      : undefined,
  )
}

/** Compares lib/stores/aws/dynamo/ with the SDK's signer and marshaller, so it imports them. */
/** The tests that hold our DynamoDB client to the SDK: signer and values, endpoints, retries. */
const SDK_CONFORMANCE_TESTS = [
  'test/unit/stores/dynamo-sdk-conformance.test.ts',
  'test/unit/stores/dynamo-endpoint.test.ts',
  'test/unit/stores/dynamo-retry.test.ts',
]

// ────────── the rules ──────────

/** Each rule, by the sentence that names its test, returning its violations as `file:line what`. */
const RULES: Record<string, () => string[]> = {
  'lib/ imports no hono, @hono/*, sst, nor anything in functions/': () =>
    LIB.flatMap(importsOf).flatMap((i) => {
      if (/^(hono|sst|@hono\/[^/]+)(\/|$)/.test(i.specifier)) return [at(i, 'imports the edge framework')]
      if (isUnder(i.target, 'functions')) return [at(i, 'imports the edge')]
      return []
    }),

  'only lib/stores/aws/ imports @aws-sdk/* (functions/, test/ and bench/ go through it too; three tests hold our DynamoDB client to the SDK)':
    () =>
      EVERYTHING.filter((f) => !isUnder(f, 'lib/stores/aws') && !SDK_CONFORMANCE_TESTS.includes(f))
        .flatMap(importsOf)
        .filter((i) => i.specifier.startsWith('@aws-sdk/'))
        .map((i) => at(i, 'imports')),

  'lib/ never reads process.env (settings arrive as arguments from functions/)': () => LIB.flatMap(envReads),

  'lib/ reads the wall clock (Date.now(), new Date(), Date()) only in lib/runtime/clock.ts': () => clockReads(),

  'functions/http/ depends only on functions/http/ and lib/ (never on deps, local, api or other composition roots)': () =>
    FUNCTIONS.filter((f) => isUnder(f, 'functions/http'))
      .flatMap(importsOf)
      .filter((i) => i.target && !isUnder(i.target, 'functions/http') && !isUnder(i.target, 'lib'))
      .map((i) => at(i, 'imports')),

  'every lib/ folder has a place in the layers (a new folder must be ranked)': () =>
    LIB.filter((f) => layerOf(f) === undefined && !UNRANKED.some((u) => isUnder(f, u))).map((f) => `${f}:1 is in no layer of LIB_LAYERS`),

  'lib/ layers import only downwards: no lower folder imports lib/tools, lib/recipes, lib/surface or lib/usage': () => upwardImports(LIB),

  'no module functions/http/app.ts imports imports it back (routes name AppDeps from app-deps.ts)': () => {
    const app = 'functions/http/app.ts'
    const imported = new Set(importsOf(app).map((i) => i.target))
    return FUNCTIONS.filter((f) => imported.has(f))
      .flatMap(importsOf)
      .filter((i) => i.target === app)
      .map((i) => at(i, 'imports the app that imports it'))
  },

  'functions/ reads request headers only through functions/http/headers.ts (c.req.header builds a web Headers on node-server)': () =>
    FUNCTIONS.filter((f) => f !== 'functions/http/headers.ts').flatMap(webHeaderReads),

  'functions/http/routes/ answers JSON through jsonAnswer (c.json renders and writes a large answer in one stretch)': () =>
    FUNCTIONS.filter((f) => isUnder(f, 'functions/http/routes')).flatMap(wholeJsonAnswers),

  'lib/ and functions/ never import test/ or bench/': () =>
    [...LIB, ...FUNCTIONS]
      .flatMap(importsOf)
      .filter((i) => isUnder(i.target, 'test') || isUnder(i.target, 'bench'))
      .map((i) => at(i, 'imports')),
}

describe('architecture', () => {
  it('scans the code it is meant to guard', () => {
    expect(LIB).toEqual(expect.arrayContaining(['lib/errors.ts', 'lib/runtime/clock.ts', 'lib/stores/aws/document-store.ts']))
    expect(FUNCTIONS).toEqual(expect.arrayContaining(['functions/api.ts', 'functions/http/app.ts']))
    // The import reader sees imports, re-exports and dynamic imports, and resolves relative ones.
    expect(importsOf('functions/api.ts').map((i) => i.target ?? i.specifier)).toEqual(
      expect.arrayContaining([
        'functions/sst-resource.ts',
        'functions/deps.ts',
        'functions/http/app.ts',
        'functions/http/lambda-streaming.ts',
      ]),
    )
  })

  it('catches what each rule is about, and not comments or strings that mention it', () => {
    const snippet = (name: string, text: string) => source(`snippet/${name}.ts`, text).file
    const env = snippet(
      'env',
      [
        '// process.env.IN_A_COMMENT',
        "const s = 'process.env.IN_A_STRING'",
        'const a = process.env.A',
        "const b = process['env']",
        'const { env } = process',
        'const c = globalThis.process.env.C',
        "import { env as e } from 'node:process'",
      ].join('\n'),
    )
    expect(envReads(env).map((v) => v.replace(/ .*/, ''))).toEqual([
      'snippet/env.ts:3',
      'snippet/env.ts:4',
      'snippet/env.ts:5',
      'snippet/env.ts:6',
      'snippet/env.ts:7',
    ])
    const clock = snippet(
      'clock',
      [
        '// Date.now()',
        'const a = Date.now()',
        'const b = new Date()',
        'const c = new Date(0)',
        'const d = Date()',
        'const e = clock.now()',
      ].join('\n'),
    )
    expect(clockReadsIn(clock)).toEqual([
      'snippet/clock.ts:2 calls Date.now()',
      'snippet/clock.ts:3 calls new Date() (the current time)',
      'snippet/clock.ts:5 calls Date() (the current time)',
    ])
    const imports = snippet(
      'imports',
      [
        "import type { X } from '@aws-sdk/client-s3'",
        "export { y } from '../functions/deps'",
        "const z = await import('hono/jwt')",
        "// import 'sst'",
      ].join('\n'),
    )
    expect(importsOf(imports).map((i) => `${i.line} ${i.target ?? i.specifier}`)).toEqual([
      '1 @aws-sdk/client-s3',
      '2 functions/deps.ts',
      '3 hono/jwt',
    ])
    const headers = snippet(
      'headers',
      ["// c.req.header('a')", "const a = c.req.header('a')", 'const b = c.req.raw.headers.get("b")', "const d = headerOf(c, 'd')"].join(
        '\n',
      ),
    )
    expect(
      wholeJsonAnswers(
        snippet(
          'answers',
          ['// c.json({})', "const t = 'c.json(x)'", 'return c.json({ a: 1 })', 'return jsonAnswer(c, { a: 1 })'].join('\n'),
        ),
      ),
    ).toEqual(['snippet/answers.ts:3 calls c.json (use jsonAnswer)'])
    expect(webHeaderReads(headers)).toEqual([
      'snippet/headers.ts:2 calls c.req.header (use headerOf)',
      'snippet/headers.ts:3 reads c.req.raw.headers (use headerOf)',
    ])
    const upward = source(
      'lib/sandbox/snippet-upward.ts',
      [
        "import type { Tool } from '../tools/contracts'",
        "import type { ToolOutcome } from '../calls/outcome'",
        "import { x } from './execute'",
      ].join('\n'),
    ).file
    expect(upwardImports([upward])).toEqual(["lib/sandbox/snippet-upward.ts:1 reaches up from layer 3 to layer 4: '../tools/contracts'"])
  })

  for (const [name, rule] of Object.entries(RULES)) {
    it(name, () => {
      expect(unlisted(rule())).toEqual([])
    })
  }

  it('lists no known violation that has since been fixed (delete its entry)', () => {
    const found = Object.values(RULES).flatMap((rule) => rule())
    const stale = KNOWN_VIOLATIONS.filter((k) => !found.some((v) => matches(v, k))).map((k) => `${k.file} ${k.what}`)
    expect(stale).toEqual([])
  })
})
