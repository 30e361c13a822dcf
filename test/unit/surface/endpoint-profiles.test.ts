/**
 * Endpoint profiles (issue 26): for every endpoint the bundled model catalog describes, a surface
 * of 600 tools — long names (some with a short alias), large schemas, families of every size —
 * renders within every limit the catalog states for it, in every wire form that endpoint reads,
 * and each rendering passes that provider's published request schema for the tools array.
 *
 * Published schemas (test/fixtures/provider-tools/, each naming its repository, path and commit,
 * extracted by scripts/provider-schemas.ts): OpenAI Chat Completions and Responses (openai-openapi;
 * Chat also for Azure OpenAI, Groq and xAI, which take the same request), Mistral's chat request
 * (its platform docs' OpenAPI), Bedrock Converse's Tools (the Smithy model in aws-sdk-js-v3,
 * applied to the `native` form as a backend translates it). Anthropic publishes no readable request
 * schema (its OpenAPI is served by its SDK generator, not published in a repository), so Anthropic
 * and Bedrock InvokeModel keep the hand-written anthropic-messages-tools.schema.json. Gemini's
 * `format=gemini` is held to the Tool message of Google's published protobuf
 * (googleapis/googleapis content.proto, read by the same script's proto reader).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import Ajv2020 from 'ajv/dist/2020'
import addFormats from 'ajv-formats'
import { describe, expect, it } from 'vitest'
import { isServerToolsError } from '../../../lib/errors'
import { checkModelCatalogDocument, type ProviderDocument, parseModelDocument, parseProviderDocument } from '../../../lib/models/documents'
import { classify, toolBytes } from '../../../lib/surface/classify'
import { type ManifestFormat, nativeSplit, STRICT_DIALECT, toolsArrayJson } from '../../../lib/surface/formats'
import { judgeStrict, planStrict } from '../../../lib/surface/strict'
import type { Tool } from '../../../lib/tools/contracts'
import { FLOOR, NOW, processRecord, tool } from './helpers'

const MODELS = join(import.meta.dirname, '../../../defaults/models')
const fixture = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, '../../fixtures/provider-tools', name), 'utf8')) as Record<string, unknown>
const ajv = new Ajv2020({ allErrors: true, strict: false })
addFormats(ajv)
const schema = (name: string) => ajv.compile(fixture(name))
const PUBLISHED = {
  openaiChat: schema('openai-chat-tools.schema.json'),
  openaiResponses: schema('openai-responses-tools.schema.json'),
  mistral: schema('mistral-chat-tools.schema.json'),
  anthropic: schema('anthropic-messages-tools.schema.json'),
  bedrockConverse: schema('bedrock-converse-tools.schema.json'),
  gemini: schema('gemini-tools.schema.json'),
}
type Validate = (typeof PUBLISHED)['openaiChat']

const endpoints = readdirSync(MODELS).map((instance) => {
  const path = `models/${instance}/_provider.yaml`
  const parsed = parseProviderDocument(readFileSync(join(MODELS, instance, '_provider.yaml'), 'utf8'), path)
  if (!parsed.ok) throw new Error(`${path}: ${JSON.stringify(parsed.issues)}`)
  return { instance, doc: parsed.config }
})
/** Every bundled model document, as the catalog reads it: its fields over its provider's. */
const models = endpoints.flatMap(({ instance, doc }) =>
  readdirSync(join(MODELS, instance))
    .filter((f) => f !== '_provider.yaml' && f.endsWith('.yaml'))
    .map((f) => {
      const path = `models/${instance}/${f}`
      const parsed = parseModelDocument(readFileSync(join(MODELS, instance, f), 'utf8'), path)
      if (!parsed.ok) throw new Error(`${path}: ${JSON.stringify(parsed.issues)}`)
      return { instance, model: f.replace(/\.yaml$/, ''), doc: { ...doc, ...parsed.config } as ProviderDocument }
    }),
)

/** Each wire form an endpoint reads, with the published schema that holds it (a backend translates `native` for Converse). */
function renderingsOf(
  instance: string,
  doc: ProviderDocument,
): { format: ManifestFormat; validate?: Validate; translate?: (t: Record<string, unknown>[]) => unknown }[] {
  if (instance === 'openai' || instance === 'azure-openai')
    return [
      { format: 'openai', validate: PUBLISHED.openaiChat },
      { format: 'openai-responses', validate: PUBLISHED.openaiResponses },
    ]
  if (doc.wireType === 'openai') return [{ format: 'openai', validate: PUBLISHED.openaiChat }]
  if (instance === 'mistral') return [{ format: 'openai', validate: PUBLISHED.mistral }]
  if (doc.wireType === 'anthropic' || instance === 'bedrock-invoke') return [{ format: 'anthropic', validate: PUBLISHED.anthropic }]
  if (instance === 'bedrock-converse')
    return [
      {
        format: 'native',
        validate: PUBLISHED.bedrockConverse,
        // the backend's translation of the native form: one toolSpec per tool, the schema under `json`
        translate: (tools) =>
          tools.map((t) => ({ toolSpec: { name: t.name, description: t.description, inputSchema: { json: t.inputSchema } } })),
      },
    ]
  if (instance === 'gemini') return [{ format: 'gemini', validate: PUBLISHED.gemini }]
  return [{ format: 'native' }]
}

/** The function entries of a rendering: Gemini's sit in the one Tool's functionDeclarations. */
const entriesOf = (format: ManifestFormat, rendered: Record<string, unknown>[]) =>
  format === 'gemini' ? (rendered[0].functionDeclarations as Record<string, unknown>[]) : rendered

const nameOf = (t: Record<string, unknown>) => (t.function as { name?: string } | undefined)?.name ?? (t.name as string | undefined) ?? ''
const strictOf = (t: Record<string, unknown>) => (t.function as { strict?: boolean } | undefined)?.strict ?? t.strict
const passes = (validate: Validate, value: unknown) => {
  const ok = validate(value)
  expect(ok, JSON.stringify(validate.errors?.slice(0, 3))).toBe(true)
}

/**
 * 600 tools: 40 packs of 1 to 29 sub-tools (names up to 90 characters, every fifth pack aliased
 * short), and handwritten singles. Schemas vary: every fourth pack has 60 open parameters; the rest
 * are closed, a third of them with optional and union-typed parameters (strict candidates of
 * different costs).
 */
function surfaceOf600(): Tool[] {
  const tools: Tool[] = []
  for (let p = 0; tools.length < 520; p++) {
    const size = 1 + ((p * 7) % 29)
    const pack = p % 3 === 0 ? `pack${p}_${'x'.repeat(60)}` : `pack${p}`
    for (let i = 0; i < size && tools.length < 520; i++) {
      const t = tool(`${pack}__operation_${i}`)
      const properties: Record<string, unknown> = {}
      if (p % 4 === 0) {
        // large schemas: 60 parameters with long descriptions, open (not strict-eligible)
        for (let k = 0; k < 60; k++) properties[`param_${k}`] = { type: 'string', description: `Parameter ${k}. ${'Detail. '.repeat(8)}` }
        t.inputSchema = { type: 'object', properties }
      } else {
        for (let k = 0; k < 3; k++) properties[`param_${k}`] = { type: 'string' }
        const optional = p % 3 === 1
        if (optional) properties.mode = { anyOf: [{ type: 'string' }, { type: 'integer' }] }
        t.inputSchema = {
          type: 'object',
          properties,
          required: Object.keys(properties).filter((k) => !optional || k !== 'param_2'),
          additionalProperties: false,
        }
      }
      if (p % 5 === 0 && t.name.length > 64) t.aliases = [`p${p}__op_${i}`]
      tools.push(t)
    }
  }
  for (let i = 0; tools.length < 600; i++) tools.push(tool(`single_tool_${i}`))
  return tools
}

const RESERVE = 1
const triage = (doc: ProviderDocument, tools: Tool[]) =>
  classify({
    tools: [...FLOOR, ...tools],
    process: processRecord(),
    now: NOW,
    maxActivated: 40,
    limit: doc.maxTools,
    reserve: RESERVE,
    endpoint: { maxToolNameLength: doc.maxToolNameLength, maxSchemaBytes: doc.maxSchemaBytes },
  })
/** The manifest in the triage's rank order (as the surface hands it to planStrict). */
const ranked = (turn: ReturnType<typeof triage>) =>
  turn.groups.filter((g) => g.status === 'kept').flatMap((g) => g.names.map((n) => turn.manifest.find((t) => t.name === n)!))

describe('endpoint profiles in the bundled model catalog', () => {
  it('covers every major endpoint, each document valid on write', () => {
    expect(endpoints.map((e) => e.instance).sort()).toEqual([
      'anthropic',
      'azure-openai',
      'bedrock-converse',
      'bedrock-invoke',
      'gemini',
      'groq',
      'mistral',
      'openai',
      'xai',
    ])
    for (const { instance } of endpoints) {
      const path = `models/${instance}/_provider.yaml`
      expect(checkModelCatalogDocument(path, readFileSync(join(MODELS, instance, '_provider.yaml'), 'utf8'))).toEqual([])
    }
    for (const { instance, model } of models) {
      const path = `models/${instance}/${model}.yaml`
      expect(checkModelCatalogDocument(path, readFileSync(join(MODELS, instance, `${model}.yaml`), 'utf8'))).toEqual([])
    }
  })

  it('defers in OpenAI’s form only on the models that have tool_search, not on the whole instance', () => {
    expect(endpoints.find((e) => e.instance === 'openai')?.doc.nativeDeferral).toBe('none')
    expect(models.filter((m) => m.doc.nativeDeferral === 'openai-tool-search').map((m) => `${m.instance}/${m.model}`)).toEqual([
      'openai/gpt-5.4',
      'openai/gpt-5.5',
    ])
  })

  for (const { instance, doc } of endpoints) {
    for (const { format, validate, translate } of renderingsOf(instance, doc)) {
      it(`renders a surface of 600 tools for ${instance} (${format}) within every limit its profile states${validate ? ', held to the published schema' : ''}`, () => {
        const turn = triage(doc, surfaceOf600())
        const wire = JSON.parse(toolsArrayJson(turn.manifest, format)) as Record<string, unknown>[]
        const rendered = entriesOf(format, wire)
        // count, with the engine's action tool beside the manifest
        if (doc.maxTools !== undefined) expect(rendered.length + RESERVE).toBeLessThanOrEqual(doc.maxTools)
        // names: every one the endpoint accepts, and distinct (the published schemas leave some of this to prose)
        const names = rendered.map(nameOf)
        for (const n of names) {
          expect(n).toMatch(/^[a-zA-Z0-9_-]+$/)
          if (doc.maxToolNameLength !== undefined) expect(n.length).toBeLessThanOrEqual(doc.maxToolNameLength)
        }
        expect(new Set(names).size).toBe(names.length)
        // schema size, as the triage measures it
        if (doc.maxSchemaBytes !== undefined) {
          const bytes = turn.manifest.reduce((sum, t) => sum + toolBytes(t, doc.maxSchemaBytes! + 1), 0)
          expect(bytes).toBeLessThanOrEqual(doc.maxSchemaBytes)
          expect(turn.budget.schemaBytes).toBe(bytes)
        }
        // strict is asked for separately (below): unasked, no tool is strict
        expect(rendered.filter((t) => strictOf(t) === true)).toEqual([])
        if (validate) passes(validate, translate ? translate(wire) : wire)
        // the surface is large enough that every stated limit binds (the test is not met by a small manifest)
        const reasons = new Set(turn.demotedGroups.map((g) => g.reason))
        if (doc.maxToolNameLength !== undefined) expect(reasons).toContain('nameLength')
        if (doc.maxSchemaBytes !== undefined) expect(reasons).toContain('schemaBytes')
        else if (doc.maxTools !== undefined) expect(reasons).toContain('count')
        // every visible tool is accounted for: in the manifest or demoted by whole families, each with its reason
        expect(turn.manifest.length + turn.demoted.length).toBe(602)
        for (const g of turn.demotedGroups) expect(new Set(g.names.map((n) => n.split('__')[0])).size).toBe(1)
        for (const [family, reason] of Object.entries(turn.budget.demotedFor ?? {}))
          expect(turn.demotedGroups.find((g) => g.family === family)?.reason).toBe(reason)
      })

      const dialect = STRICT_DIALECT[format]
      if (!dialect) continue
      it(`renders ${instance}'s strict tools (${format}) within its strict caps and the provider's strict rules, held to the published schema`, () => {
        const turn = triage(doc, surfaceOf600())
        const plan = planStrict(ranked(turn), dialect, doc.strict)
        const rendered = JSON.parse(toolsArrayJson(turn.manifest, format, { strict: plan.strict })) as Record<string, unknown>[]
        if (validate) passes(validate, rendered)
        const strict = rendered.filter((t) => strictOf(t) === true).map(nameOf)
        const strictTools = turn.manifest.filter((t) => plan.strict.has(t))
        expect(strict).toEqual(strictTools.map((t) => t.aliases?.find((a) => a.length <= 64 && t.name.length > 64) ?? t.name))
        // every strict tool meets the rules; every other manifest tool is named with its reason
        for (const t of strictTools) expect(judgeStrict(t.inputSchema, dialect).ok).toBe(true)
        expect(Object.keys(plan.notStrict).sort()).toEqual(
          turn.manifest
            .filter((t) => !plan.strict.has(t))
            .map((t) => t.name)
            .sort(),
        )
        expect(strict.length).toBeGreaterThan(0)
        const caps = doc.strict
        if (caps) {
          const cost = strictTools.reduce(
            (sum, t) => {
              const v = judgeStrict(t.inputSchema, dialect)
              return v.ok ? { optional: sum.optional + v.cost.optionalParams, union: sum.union + v.cost.unionParams } : sum
            },
            { optional: 0, union: 0 },
          )
          if (caps.maxTools !== undefined) expect(strict.length).toBeLessThanOrEqual(caps.maxTools)
          if (caps.maxOptionalParams !== undefined) expect(cost.optional).toBeLessThanOrEqual(caps.maxOptionalParams)
          if (caps.maxUnionParams !== undefined) expect(cost.union).toBeLessThanOrEqual(caps.maxUnionParams)
          // the 600 tools have more strict candidates than the caps allow: a cap binds, and says so
          expect(Object.values(plan.notStrict).some((r) => /^max(Tools|OptionalParams|UnionParams):/.test(r))).toBe(true)
        }
      })
    }
  }

  it('defers in Anthropic’s form only on the models Anthropic documents tool search for, not on the whole instance', () => {
    for (const instance of ['anthropic', 'bedrock-invoke'])
      expect(endpoints.find((e) => e.instance === instance)?.doc.nativeDeferral).toBe('none')
    expect(
      models
        .filter((m) => m.doc.nativeDeferral === 'anthropic-tool-search')
        .map((m) => `${m.instance}/${m.model}`)
        .sort(),
    ).toEqual([
      'anthropic/claude-opus-4-5',
      'anthropic/claude-opus-4-5-20251101',
      'anthropic/claude-sonnet-4-5',
      'anthropic/claude-sonnet-4-5-20250929',
      'bedrock-invoke/anthropic.claude-opus-4-5-20251101-v1:0',
      'bedrock-invoke/eu.anthropic.claude-opus-4-5-20251101-v1:0',
      'bedrock-invoke/global.anthropic.claude-opus-4-5-20251101-v1:0',
      'bedrock-invoke/us.anthropic.claude-opus-4-5-20251101-v1:0',
    ])
  })

  const anthropicDeferring = models.filter((m) => m.doc.nativeDeferral === 'anthropic-tool-search')
  for (const { instance, doc } of anthropicDeferring.map((m) => ({ instance: `${m.instance}/${m.model}`, doc: m.doc }))) {
    it(`renders ${instance}'s deferred tools in Anthropic's own form, held to the published schema`, () => {
      const tools = surfaceOf600().map((t, i) => (i % 2 ? { ...t, deferred: true } : t))
      const turn = triage(doc, tools)
      // a tool whose name the endpoint refuses is refused deferred as well: only the accepted ones go
      const deferrable = [...turn.deferred, ...turn.demoted].filter((t) => t.name.length <= 64 || t.aliases?.length)
      const rendered = JSON.parse(toolsArrayJson(turn.manifest, 'anthropic', { deferred: deferrable })) as Record<string, unknown>[]
      passes(PUBLISHED.anthropic, rendered)
      expect(rendered.filter((t) => typeof t.type === 'string' && String(t.type).startsWith('tool_search_tool_'))).toHaveLength(1)
      expect(rendered.filter((t) => t.defer_loading === true)).toHaveLength(deferrable.length)
      // the endpoint needs at least one tool that is not deferred beside the search tool
      expect(rendered.some((t) => t.input_schema && t.defer_loading !== true)).toBe(true)
    })
  }

  const openaiDeferring = models.filter((m) => m.doc.nativeDeferral === 'openai-tool-search')
  for (const { instance, doc } of openaiDeferring.map((m) => ({ instance: `${m.instance}/${m.model}`, doc: m.doc }))) {
    it(`renders ${instance}'s deferred tools in the Responses API's own form within its count, held to the published schema`, () => {
      // 40 primary tools, the rest deferred: the manifest leaves room in the count for some of them
      const tools = surfaceOf600().map((t, i) => (i >= 40 ? { ...t, primary: false } : t))
      const turn = triage(doc, tools)
      const split = nativeSplit(turn.budget.effective, turn.manifest.length, turn.demoted, turn.deferred)
      const native = [...split.deferred, ...split.demoted]
      const rendered = JSON.parse(toolsArrayJson(turn.manifest, 'openai-responses', { deferred: native })) as Record<string, unknown>[]
      passes(PUBLISHED.openaiResponses, rendered)
      expect(rendered.filter((t) => t.type === 'tool_search')).toHaveLength(1)
      expect(rendered.filter((t) => t.defer_loading === true)).toHaveLength(native.length)
      expect(native.length).toBeGreaterThan(0)
      // deferred entries count like any other: the whole array, with the engine's action tool, fits maxTools
      expect(rendered.length + RESERVE).toBe(doc.maxTools)
      // and what did not fit is left to our discovery block, not dropped
      expect(native.length).toBeLessThan(turn.deferred.length + turn.demoted.length)
    })

    it(`renders ${instance}'s deferred tools natively only as far as the count leaves room`, () => {
      // every tool primary: the manifest fills the count, so nothing is deferred natively
      const turn = triage(doc, surfaceOf600())
      expect(nativeSplit(turn.budget.effective, turn.manifest.length, turn.demoted, turn.deferred)).toEqual({ demoted: [], deferred: [] })
    })
  }
})

describe('the triage against an endpoint profile', () => {
  const run = (tools: Tool[], endpoint: { maxToolNameLength?: number; maxSchemaBytes?: number }, limit?: number) =>
    classify({ tools: [...FLOOR, ...tools], process: processRecord(), now: NOW, maxActivated: 40, reserve: 0, limit, endpoint })

  it('demotes a whole family when one of its names is too long and has no alias that fits, and says why', () => {
    const long = `crm__${'find_customer_by_'.repeat(4)}email`
    const turn = run([tool(long), tool('crm__update'), tool('weather')], { maxToolNameLength: 64 })
    expect(turn.manifest.map((t) => t.name)).toEqual(['tool_description', 'tool_list', 'weather'])
    expect(turn.demotedGroups).toEqual([{ family: 'crm', tier: 5, names: [long, 'crm__update'], reason: 'nameLength' }])
    expect(turn.budget.demotedFor).toEqual({ crm: 'nameLength' })
  })

  it('keeps a tool whose own name is too long when an alias fits', () => {
    const t = tool(`crm__${'x'.repeat(70)}`)
    t.aliases = ['crm__short']
    const turn = run([t], { maxToolNameLength: 64 })
    expect(turn.manifest.map((x) => x.name)).toContain(t.name)
    expect(JSON.parse(toolsArrayJson(turn.manifest, 'openai')).map((x: { function: { name: string } }) => x.function.name)).toContain(
      'crm__short',
    )
  })

  it('judges the name the manifest sends, not an alias it does not send', () => {
    // the own name (50 characters) is what every rendering sends; an endpoint allowing 40 refuses it
    const t = tool(`crm__${'y'.repeat(45)}`)
    t.aliases = ['crm__short']
    const turn = run([t], { maxToolNameLength: 40 })
    expect(turn.budget.demotedFor).toEqual({ crm: 'nameLength' })
  })

  it('demotes lower-ranked families once the schema bytes are spent, and reports the bytes', () => {
    const big = (name: string) => {
      const t = tool(name)
      t.inputSchema = { type: 'object', properties: { q: { type: 'string', description: 'y'.repeat(2000) } } }
      return t
    }
    const tools = [big('alpha'), big('beta'), big('gamma')]
    const floorBytes = FLOOR.reduce((sum, t) => sum + toolBytes(t, 1e6), 0)
    const limit = floorBytes + toolBytes(tools[0], 1e6) * 2.5
    const turn = run(tools, { maxSchemaBytes: limit })
    expect(turn.manifest.map((t) => t.name)).toEqual(['alpha', 'beta', 'tool_description', 'tool_list'])
    expect(turn.demotedGroups.map((g) => [g.family, g.reason])).toEqual([['gamma', 'schemaBytes']])
    expect(turn.budget.schemaBytes).toBeLessThanOrEqual(limit)
    expect(turn.groups.find((g) => g.family === 'gamma')).toMatchObject({ status: 'demoted', reason: 'schemaBytes' })
  })

  it('stops measuring a schema soon after the limit, whatever its size as JSON', () => {
    const shared: Record<string, unknown> = { type: 'string', description: 'z'.repeat(1000) }
    let node: Record<string, unknown> = shared
    // 2^20 uses of one node through sharing: far more bytes as JSON than in memory
    for (let i = 0; i < 20; i++) node = { type: 'object', properties: { a: node, b: node } }
    const t = tool('huge')
    t.inputSchema = node
    // about 1 GB as JSON; the measure stops within one string past the cap
    const bytes = toolBytes(t, 10_001)
    expect(bytes).toBeGreaterThan(10_001)
    expect(bytes).toBeLessThan(12_000)
    const turn = run([t], { maxSchemaBytes: 10_000 })
    expect(turn.budget.demotedFor).toEqual({ huge: 'schemaBytes' })
  })

  it('refuses a profile the capability floor alone does not fit, naming the setting', () => {
    let err: unknown
    try {
      run([tool('weather')], { maxSchemaBytes: 10 })
    } catch (e) {
      err = e
    }
    expect(isServerToolsError(err) && err.code).toBe('BUDGET_TOO_SMALL')
    expect((err as Error).message).toContain('maxSchemaBytes')
  })
})

describe('profile fields in the catalog documents', () => {
  it('refuses a misspelt limit with its line and a did-you-mean', () => {
    const issues = checkModelCatalogDocument('models/acme/_provider.yaml', 'wireType: openai\nmaxToolNameLenght: 64\n')
    expect(issues).toEqual([expect.objectContaining({ line: 2, message: expect.stringContaining("did you mean 'maxToolNameLength'") })])
  })

  it('refuses an unknown deferral and an unknown strict cap, each where it is written', () => {
    const issues = checkModelCatalogDocument(
      'models/acme/claude.yaml',
      'deferral: sometimes\nstrict:\n  maxTools: 20\n  maxOptionalParam: 24\n',
    )
    expect(issues.map((i) => [i.pointer, i.line]).sort()).toEqual([
      ['/deferral', 1],
      ['/strict/maxOptionalParam', 4],
    ])
    expect(issues.find((i) => i.pointer === '/strict/maxOptionalParam')?.message).toContain("did you mean 'maxOptionalParams'")
  })
})
