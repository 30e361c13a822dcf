/**
 * The calling half of `prompt_template` (lib/tools/types/prompt_template.ts holds its definition):
 * the model looked up in the catalog, the prompt rendered, the completion through the wire
 * clients, and a structured answer parsed and checked against outputSchema.
 */

import type { ToolOutcome } from '../../../calls/outcome'
import { success, toolError } from '../../../calls/outcome'
import { BudgetExceeded, EXPANSION_LIMITS, ExpansionBudget } from '../../../config/expansion-budget'
import type { JsonSchema } from '../../../config/json-schema'
import { validateAgainst } from '../../../config/json-schema'
import { isEgressError } from '../../../egress/errors'
import { ModelCatalog } from '../../../llm/catalog'
import type { Completion } from '../../../llm/wire'
import { LlmCallError, objectRoot } from '../../../llm/wire'
import { loadSecrets, secretNamesIn, substituteSecrets } from '../../../secrets/references'
import { SecretScrubber } from '../../../secrets/scrubber'
import type { FactoryEnv } from '../../contracts'
import {
  DEFAULT_LLM_TIMEOUT_MS,
  DEFAULT_MAX_TOKENS,
  MAX_LLM_TIMEOUT_MS,
  PLACEHOLDER,
  type PromptTemplateDeps,
  type PromptTemplateParameters,
} from '../prompt_template'

/** One per factory: what its tools' calls share. */
export class PromptTemplateRuntime {
  private readonly catalog: ModelCatalog

  constructor(private readonly deps: PromptTemplateDeps) {
    this.catalog = deps.catalog ?? new ModelCatalog()
  }

  async invoke(
    tool: string,
    p: PromptTemplateParameters,
    params: Record<string, unknown>,
    env: FactoryEnv,
    signal?: AbortSignal,
  ): Promise<ToolOutcome> {
    const lookup = await this.catalog.resolve(env, p.model, p.modelSize)
    if (!lookup.ok) return toolError(`Tool '${tool}' cannot call its model: ${lookup.message}.`, { model: p.model })
    const model = lookup.model
    const provider = model.provider

    const names = secretNamesIn([provider.apiKey ?? '', provider.headers])
    const { values, missing } = await loadSecrets(this.deps.secrets, env.tenant, names)
    if (missing.length) {
      return toolError(
        `Tool '${tool}' cannot call model '${model.ref}': the secret${missing.length > 1 ? 's' : ''} ${missing.map((m) => `'${m}'`).join(', ')} ${missing.length > 1 ? 'are' : 'is'} not set for this tenant.`,
        { model: model.ref },
      )
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
    const wire = this.deps.wires[provider.wireType]
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
      return scrubber.scrub(this.failure(model.ref, timeoutMs, e))
    }
    const usage = completion.usage
    if (!p.outputSchema) return scrubber.scrub(success({ text: completion.text, model: model.ref, usage }))

    const parsed = answerValue(completion, p.outputSchema)
    if (!parsed.ok) {
      const cut =
        completion.stopReason === 'length' || completion.stopReason === 'max_tokens'
          ? ` The answer was cut off at maxTokens (${maxTokens}); raise maxTokens.`
          : ''
      return scrubber.scrub(
        toolError(`Model '${model.ref}' did not answer with JSON: ${parsed.message}.${cut}`, {
          model: model.ref,
          usage,
          answer: scrubber.scrubText(completion.text).slice(0, 2000),
        }),
      )
    }
    const issues = validateAgainst(p.outputSchema, parsed.value)
    if (issues.length) {
      return scrubber.scrub(
        toolError(
          `The answer of model '${model.ref}' does not match outputSchema: ${issues.map((i) => `${i.pointer || '/'}: ${i.message}`).join('; ')}.`,
          {
            model: model.ref,
            usage,
            errors: issues,
            answer: parsed.value,
          },
        ),
      )
    }
    return scrubber.scrub(success({ value: parsed.value, model: model.ref, usage }))
  }

  private failure(model: string, timeoutMs: number, e: unknown): ToolOutcome {
    if (e instanceof LlmCallError) {
      const extra: Record<string, unknown> = {
        model,
        ...(e.status !== undefined ? { status: e.status } : {}),
        ...(e.usage ? { usage: e.usage } : {}),
      }
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
export function renderPrompt(
  p: Pick<PromptTemplateParameters, 'promptPrefix' | 'inputs' | 'outputSchema'>,
  params: Record<string, unknown>,
  maxChars: number = EXPANSION_LIMITS.promptChars,
): string {
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
  const blocks = p.inputs
    .filter((i) => !used.has(i.name) && params[i.name] !== undefined)
    .map((i) => `<${i.name}>\n${valueText(params[i.name])}\n</${i.name}>`)
  if (blocks.length) text = `${text.trimEnd()}\n\n${blocks.join('\n\n')}`
  if (p.outputSchema)
    text = `${text.trimEnd()}\n\nAnswer with one JSON value that matches this JSON Schema, and nothing else:\n${JSON.stringify(p.outputSchema)}`
  return text
}

const sentence = (m: string) => (/[.!?]$/.test(m) ? m : `${m}.`)

const valueText = (v: unknown) => (v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v))

/** The JSON answer: the wire's structured data, else the text (code fences tolerated); unwrapped when the schema was wrapped. */
function answerValue(c: Completion, schema: JsonSchema): { ok: true; value: unknown } | { ok: false; message: string } {
  let value: unknown
  if (c.data) value = c.data.value
  else {
    const t = c.text
      .trim()
      .replace(/^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i, '$1')
      .trim()
    if (!t) return { ok: false, message: 'the answer is empty' }
    try {
      value = JSON.parse(t)
    } catch (e) {
      return { ok: false, message: `the answer is not valid JSON (${(e as Error).message})` }
    }
  }
  if (objectRoot(schema).wrapped) {
    // the provider was given { value: <schema> }; a model may still answer the bare value
    if (value && typeof value === 'object' && !Array.isArray(value) && 'value' in value && Object.keys(value).length === 1)
      value = (value as { value: unknown }).value
  }
  return { ok: true, value }
}
