/**
 * `prompt_template` (spec §3): one LLM call with a fixed prompt prefix — a mini-agent as configuration.
 *
 *   type: prompt_template
 *   parameters:
 *     promptPrefix: |
 *       Classify the support ticket below as bug, question or feature request.
 *       Product: {{product}}
 *     model: openai/gpt-4o-mini          # instance/model from the model catalog, or an instance + modelSize
 *     modelSize: small                   # only with `model: <instance>`: picks the provider's sizes.small
 *     inputs: [{ name: product, type: string }, { name: ticket, type: string }]
 *     outputSchema: { type: object, required: [kind], properties: { kind: { enum: [bug, question, feature] } } }
 *     maxTokens: 300                     # default: the model's maxOutputTokens, else 1024 (capped by it)
 *     temperature: 0
 *     timeoutMs: 30000                   # default: the provider's, else 60000 (max 120000)
 *
 * Rendering: `{{name}}` in the prefix is replaced by the input's value (strings as they are,
 * anything else as JSON; an absent optional input as nothing); every input the prefix does not
 * mention follows the prefix as a `<name>…</name>` block, in declaration order. The prompt is
 * one user message, so the fixed prefix is a cacheable prefix at the provider.
 *
 * With `outputSchema` the model is asked for JSON (OpenAI `response_format: json_schema`,
 * Anthropic a forced tool), and the answer is parsed and validated: a mismatch is a tool error
 * naming the pointers. Result: `{ text | value, model, usage: { inputTokens, outputTokens } }`.
 * Every call goes through the egress guard; secret values are scrubbed from results and errors.
 */
import { BudgetExceeded, EXPANSION_LIMITS, ExpansionBudget } from '../../config/expansion-budget'
import { compile, validateAgainst } from '../../config/json-schema'
import type { EgressClient } from '../../egress/client'
import { isEgressError } from '../../egress/errors'
import { ModelCatalog } from '../../llm/catalog'
import type { ModelSize } from '../../models/documents'
import { INSTANCE_PATTERN, MODEL_PATTERN, MODEL_SIZES, parseModelName } from '../../models/documents'
import type { Completion, WireClient } from '../../llm/wire'
import { LlmCallError, objectRoot } from '../../llm/wire'
import type { SecretStore } from '../../secrets/ports'
import { loadSecrets, secretNamesIn, substituteSecrets } from '../../secrets/references'
import { SecretScrubber } from '../../secrets/scrubber'
import type { FactoryEnv, ToolFactory, ToolSpec } from '../contracts'
import type { JsonSchema } from '../../config/json-schema'
import type { ServerToolConfig } from '../../config/server-tool'
import type { ToolOutcome } from '../../calls/outcome'
import { success, toolError } from '../../calls/outcome'
import { checkInputs, inputsSchema, schemaFromInputs, type InputDeclaration } from '../inputs'

export interface PromptTemplateParameters {
  promptPrefix: string
  model: string
  modelSize?: ModelSize
  inputs: InputDeclaration[]
  outputSchema?: JsonSchema
  maxTokens?: number
  temperature?: number
  timeoutMs?: number
}

export interface PromptTemplateDeps {
  egress: Pick<EgressClient, 'request'>
  secrets: SecretStore
  /** The wire clients by wire type (lib/llm `wireClients`, built by the composition root). */
  wires: Record<string, WireClient>
  catalog?: ModelCatalog
}

export const DEFAULT_LLM_TIMEOUT_MS = 60_000
export const MAX_LLM_TIMEOUT_MS = 120_000
export const DEFAULT_MAX_TOKENS = 1024

const PLACEHOLDER = /\{\{\s*([A-Za-z_$][A-Za-z0-9_$]*)\s*\}\}/g

export class PromptTemplateFactory implements ToolFactory<PromptTemplateParameters> {
  readonly typeId = 'prompt_template'
  readonly kind = 'single' as const
  readonly parametersSchema = {
    type: 'object',
    required: ['promptPrefix', 'model', 'inputs'],
    additionalProperties: false,
    properties: {
      promptPrefix: { type: 'string', minLength: 1, maxLength: 200_000, description: 'Fixed prompt text; {{input}} placeholders are replaced' },
      model: { type: 'string', pattern: `${INSTANCE_PATTERN.slice(0, -1)}(/${MODEL_PATTERN.slice(1, -1)})?$`, description: 'instance/model from the model catalog, or an instance with modelSize' },
      modelSize: { enum: MODEL_SIZES },
      inputs: inputsSchema,
      outputSchema: { type: 'object', description: 'JSON Schema the answer must match; the answer is then JSON' },
      maxTokens: { type: 'integer', minimum: 1, maximum: 200_000 },
      temperature: { type: 'number', minimum: 0, maximum: 2 },
      timeoutMs: { type: 'integer', minimum: 100, maximum: MAX_LLM_TIMEOUT_MS },
    },
  }

  private readonly wires: Record<string, WireClient>
  private readonly catalog: ModelCatalog

  constructor(private readonly deps: PromptTemplateDeps) {
    this.wires = deps.wires
    this.catalog = deps.catalog ?? new ModelCatalog()
  }

  check(p: PromptTemplateParameters): { pointer: string; message: string }[] {
    const problems = checkInputs(p.inputs, '/inputs')
    const declared = new Set(p.inputs.map((i) => i.name))
    for (const m of p.promptPrefix.matchAll(PLACEHOLDER)) {
      if (!declared.has(m[1])) problems.push({ pointer: '/promptPrefix', message: `placeholder {{${m[1]}}} names no declared input` })
    }
    const name = parseModelName(p.model)
    if (typeof name === 'string') problems.push({ pointer: '/model', message: name })
    else if (name.model && p.modelSize) problems.push({ pointer: '/modelSize', message: `modelSize picks a model of an instance; model '${p.model}' already names one (write model: ${name.instance} to pick by size)` })
    else if (!name.model && !p.modelSize) problems.push({ pointer: '/model', message: `model '${p.model}' names an instance only; write instance/model, or add modelSize` })
    if (p.outputSchema) {
      try {
        compile(p.outputSchema)
      } catch (e) {
        problems.push({ pointer: '/outputSchema', message: `outputSchema is not a usable JSON Schema: ${(e as Error).message}` })
      }
    }
    return problems
  }

  async create(config: ServerToolConfig<PromptTemplateParameters>, env: FactoryEnv): Promise<ToolSpec[]> {
    const p = config.parameters
    return [
      {
        inputSchema: schemaFromInputs(p.inputs),
        ...(p.outputSchema ? { outputSchema: resultSchema(p.outputSchema) } : {}),
        extraLabels: ['llm'],
        invoke: (params, ctx) => this.invoke(config.name, p, params, env, ctx.signal),
      },
    ]
  }

  private async invoke(tool: string, p: PromptTemplateParameters, params: Record<string, unknown>, env: FactoryEnv, signal?: AbortSignal): Promise<ToolOutcome> {
    const lookup = await this.catalog.resolve(env, p.model, p.modelSize)
    if (!lookup.ok) return toolError(`Tool '${tool}' cannot call its model: ${lookup.message}.`, { model: p.model })
    const model = lookup.model
    const provider = model.provider

    const names = secretNamesIn([provider.apiKey ?? '', provider.headers])
    const { values, missing } = await loadSecrets(this.deps.secrets, env.tenant, names)
    if (missing.length) {
      return toolError(`Tool '${tool}' cannot call model '${model.ref}': the secret${missing.length > 1 ? 's' : ''} ${missing.map((m) => `'${m}'`).join(', ')} ${missing.length > 1 ? 'are' : 'is'} not set for this tenant.`, { model: model.ref })
    }
    const scrubber = new SecretScrubber(values)
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(provider.headers)) headers[k] = substituteSecrets(v, values)

    const cap = model.entry.maxOutputTokens
    const maxTokens = Math.min(p.maxTokens ?? cap ?? DEFAULT_MAX_TOKENS, cap ?? Number.MAX_SAFE_INTEGER)
    const timeoutMs = Math.min(p.timeoutMs ?? provider.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS, MAX_LLM_TIMEOUT_MS)
    let prompt: string
    try {
      prompt = renderPrompt(p, params)
    } catch (e) {
      if (!(e instanceof BudgetExceeded)) throw e
      return toolError(`Tool '${tool}' cannot build its prompt: ${e.message}.`, { limit: e.limit })
    }
    const wire = this.wires[provider.wireType]
    if (!wire) return toolError(`Tool '${tool}' cannot call model '${model.ref}': wire type '${provider.wireType}' is not supported.`)

    let completion: Completion
    try {
      completion = await wire.complete({
        tenant: env.tenant,
        model,
        prompt,
        maxTokens,
        ...(p.temperature !== undefined ? { temperature: p.temperature } : {}),
        ...(p.outputSchema ? { outputSchema: p.outputSchema } : {}),
        ...(provider.apiKey ? { apiKey: substituteSecrets(provider.apiKey, values) } : {}),
        headers,
        timeoutMs,
        signal,
        scrub: (text) => scrubber.scrubText(text),
      })
    } catch (e) {
      return scrubber.scrub(this.failure(tool, model.ref, timeoutMs, e))
    }
    const usage = completion.usage
    if (!p.outputSchema) return scrubber.scrub(success({ text: completion.text, model: model.ref, usage }))

    const parsed = answerValue(completion, p.outputSchema)
    if (!parsed.ok) {
      const cut = completion.stopReason === 'length' || completion.stopReason === 'max_tokens' ? ` The answer was cut off at maxTokens (${maxTokens}); raise maxTokens.` : ''
      return scrubber.scrub(toolError(`Model '${model.ref}' did not answer with JSON: ${parsed.message}.${cut}`, { model: model.ref, usage, answer: scrubber.scrubText(completion.text).slice(0, 2000) }))
    }
    const issues = validateAgainst(p.outputSchema, parsed.value)
    if (issues.length) {
      return scrubber.scrub(
        toolError(`The answer of model '${model.ref}' does not match outputSchema: ${issues.map((i) => `${i.pointer || '/'}: ${i.message}`).join('; ')}.`, {
          model: model.ref,
          usage,
          errors: issues,
          answer: parsed.value,
        }),
      )
    }
    return scrubber.scrub(success({ value: parsed.value, model: model.ref, usage }))
  }

  private failure(tool: string, model: string, timeoutMs: number, e: unknown): ToolOutcome {
    if (e instanceof LlmCallError) {
      const extra: Record<string, unknown> = { model, ...(e.status !== undefined ? { status: e.status } : {}), ...(e.usage ? { usage: e.usage } : {}) }
      return toolError(`Model '${model}' failed: ${sentence(e.message)}`, extra)
    }
    if (isEgressError(e, 'timeout')) return toolError(`Model '${model}' did not answer within ${timeoutMs} ms.`, { model, timeoutMs })
    if (isEgressError(e)) return toolError(`Model '${model}' could not be called: ${e.message}.`, { model, reason: e.reason })
    return toolError(`Model '${model}' could not be called: ${(e as Error)?.message ?? String(e)}.`, { model })
  }
}

/**
 * The prefix with `{{name}}` replaced, then every input it does not mention as a tagged block.
 * The size is added up before anything is built: 40,000 placeholders of a 1 MB input would be a
 * 40 GB string (issue 10 F1), so a prompt over `promptChars` throws BudgetExceeded instead.
 */
export function renderPrompt(p: Pick<PromptTemplateParameters, 'promptPrefix' | 'inputs' | 'outputSchema'>, params: Record<string, unknown>, maxChars: number = EXPANSION_LIMITS.promptChars): string {
  const texts = new Map<string, string>()
  const textOf = (name: string) => {
    let t = texts.get(name)
    if (t === undefined) texts.set(name, (t = valueText(params[name])))
    return t
  }
  const budget = new ExpansionBudget(maxChars, 'the rendered prompt (characters)')
  budget.spend(p.promptPrefix.length)
  const mentioned = new Set<string>()
  for (const m of p.promptPrefix.matchAll(PLACEHOLDER)) {
    mentioned.add(m[1])
    budget.spend(textOf(m[1]).length)
  }
  for (const i of p.inputs) if (!mentioned.has(i.name)) budget.spend(textOf(i.name).length + 2 * i.name.length + 8)
  const used = new Set<string>()
  let text = p.promptPrefix.replace(PLACEHOLDER, (_m, name: string) => {
    used.add(name)
    return textOf(name)
  })
  const blocks = p.inputs.filter((i) => !used.has(i.name) && params[i.name] !== undefined).map((i) => `<${i.name}>\n${valueText(params[i.name])}\n</${i.name}>`)
  if (blocks.length) text = `${text.trimEnd()}\n\n${blocks.join('\n\n')}`
  if (p.outputSchema) text = `${text.trimEnd()}\n\nAnswer with one JSON value that matches this JSON Schema, and nothing else:\n${JSON.stringify(p.outputSchema)}`
  return text
}

const sentence = (m: string) => (/[.!?]$/.test(m) ? m : `${m}.`)

const valueText = (v: unknown) => (v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v))

/** The JSON answer: the wire's structured data, else the text (code fences tolerated); unwrapped when the schema was wrapped. */
function answerValue(c: Completion, schema: JsonSchema): { ok: true; value: unknown } | { ok: false; message: string } {
  let value: unknown
  if (c.data) value = c.data.value
  else {
    const t = c.text.trim().replace(/^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i, '$1').trim()
    if (!t) return { ok: false, message: 'the answer is empty' }
    try {
      value = JSON.parse(t)
    } catch (e) {
      return { ok: false, message: `the answer is not valid JSON (${(e as Error).message})` }
    }
  }
  if (objectRoot(schema).wrapped) {
    // the provider was given { value: <schema> }; a model may still answer the bare value
    if (value && typeof value === 'object' && !Array.isArray(value) && 'value' in value && Object.keys(value).length === 1) value = (value as { value: unknown }).value
  }
  return { ok: true, value }
}

/** The content of a successful call with `outputSchema`: `{ value, model, usage }` (what MCP clients check structuredContent against). */
function resultSchema(outputSchema: JsonSchema): JsonSchema {
  const tokens = { type: 'integer', minimum: 0 }
  return {
    type: 'object',
    properties: {
      value: outputSchema,
      model: { type: 'string' },
      usage: { type: 'object', properties: { inputTokens: tokens, outputTokens: tokens } },
    },
    required: ['value', 'model', 'usage'],
  }
}
