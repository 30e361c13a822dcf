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

import type { JsonSchema } from '../../config/json-schema'
import { compile } from '../../config/json-schema'
import { ownPattern } from '../../config/patterns'
import type { ServerToolConfig } from '../../config/server-tool'
import type { EgressClient } from '../../egress/client'
import type { ModelCatalog } from '../../llm/catalog'
import type { WireClient } from '../../llm/wire'
import type { ModelSize } from '../../models/documents'
import { INSTANCE_PATTERN, MODEL_PATTERN, MODEL_SIZES, parseModelName } from '../../models/documents'
import type { SecretStore } from '../../secrets/ports'
import type { FactoryEnv, ToolFactory, ToolSpec } from '../contracts'
import { checkInputs, type InputDeclaration, inputsSchema, schemaFromInputs } from '../inputs'
import type { PromptTemplateRuntime } from './runtime/prompt_template'
import type { LoadToolRuntimes } from './runtime-loader'

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
  /** Where rendering the prompt and calling the model are (lib/tools/types/runtime). */
  load: LoadToolRuntimes
}

export const DEFAULT_LLM_TIMEOUT_MS = 60_000
export const MAX_LLM_TIMEOUT_MS = 120_000
export const DEFAULT_MAX_TOKENS = 1024

export const PLACEHOLDER = /\{\{\s*([A-Za-z_$][A-Za-z0-9_$]*)\s*\}\}/g

export class PromptTemplateFactory implements ToolFactory<PromptTemplateParameters> {
  readonly typeId = 'prompt_template'
  readonly kind = 'single' as const
  readonly parametersSchema = {
    type: 'object',
    required: ['promptPrefix', 'model', 'inputs'],
    additionalProperties: false,
    properties: {
      promptPrefix: {
        type: 'string',
        minLength: 1,
        maxLength: 200_000,
        description: 'Fixed prompt text; {{input}} placeholders are replaced',
      },
      model: {
        type: 'string',
        pattern: ownPattern(`${INSTANCE_PATTERN.slice(0, -1)}(/${MODEL_PATTERN.slice(1, -1)})?$`),
        description: 'instance/model from the model catalog, or an instance with modelSize',
      },
      modelSize: { enum: MODEL_SIZES, description: "with model: instance, picks the provider's sizes.<size>" },
      inputs: inputsSchema,
      outputSchema: { type: 'object', description: 'JSON Schema the answer must match; the answer is then JSON' },
      maxTokens: {
        type: 'integer',
        minimum: 1,
        maximum: 200_000,
        description: `default: the model's maxOutputTokens, else ${DEFAULT_MAX_TOKENS}; never above maxOutputTokens`,
      },
      temperature: { type: 'number', minimum: 0, maximum: 2, description: 'sent only when set (else the API default)' },
      timeoutMs: {
        type: 'integer',
        minimum: 100,
        maximum: MAX_LLM_TIMEOUT_MS,
        description: `default: the provider document's timeoutMs, else ${DEFAULT_LLM_TIMEOUT_MS}`,
      },
    },
  }

  /** Built by the first call, with the runtimes: the catalog and its cache of parsed documents are the container's. */
  private runtime?: Promise<PromptTemplateRuntime>

  constructor(private readonly deps: PromptTemplateDeps) {}

  private loaded(): Promise<PromptTemplateRuntime> {
    return (this.runtime ??= this.deps.load().then((m) => new m.PromptTemplateRuntime(this.deps)))
  }

  check(p: PromptTemplateParameters): { pointer: string; message: string }[] {
    const problems = checkInputs(p.inputs, '/inputs')
    const declared = new Set(p.inputs.map((i) => i.name))
    for (const m of p.promptPrefix.matchAll(PLACEHOLDER)) {
      if (!declared.has(m[1])) problems.push({ pointer: '/promptPrefix', message: `placeholder {{${m[1]}}} names no declared input` })
    }
    const name = parseModelName(p.model)
    if (typeof name === 'string') problems.push({ pointer: '/model', message: name })
    else if (name.model && p.modelSize)
      problems.push({
        pointer: '/modelSize',
        message: `modelSize picks a model of an instance; model '${p.model}' already names one (write model: ${name.instance} to pick by size)`,
      })
    else if (!name.model && !p.modelSize)
      problems.push({ pointer: '/model', message: `model '${p.model}' names an instance only; write instance/model, or add modelSize` })
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
        invoke: async (params, ctx) => (await this.loaded()).invoke(config.name, p, params, env, ctx.signal),
      },
    ]
  }
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
