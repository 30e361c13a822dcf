/**
 * One LLM call, independent of the wire format: what goes in, what comes out, how it fails.
 * The wire clients (openai.ts, anthropic.ts) translate to and from the providers' public APIs;
 * every request goes through the egress client.
 */
import type { JsonSchema } from '../config/json-schema'
import type { ResolvedModel } from './catalog'

export interface CompletionRequest {
  tenant: string
  model: ResolvedModel
  /** The whole prompt, sent as one user message. */
  prompt: string
  maxTokens: number
  temperature?: number
  /** When set, the answer is asked for as JSON matching this schema. */
  outputSchema?: JsonSchema
  /** `apiKey` and extra headers with secrets already substituted. */
  apiKey?: string
  headers: Record<string, string>
  timeoutMs: number
  signal?: AbortSignal
  /** Removes secret values from text the endpoint sent back, before it is cut to size. */
  scrub?: (text: string) => string
}

export interface Usage {
  inputTokens: number
  outputTokens: number
}

export interface Completion {
  /** The answer's text (for a JSON answer: the JSON text the model wrote, if any). */
  text: string
  /** The structured answer, when the wire returned one as data (Anthropic's forced tool input). */
  data?: { value: unknown }
  /** `stop`/`end_turn`, or `length`/`max_tokens` when the answer was cut off. */
  stopReason?: string
  /** The model name the provider reported. */
  providerModel?: string
  usage: Usage
}

export type LlmFailure = 'http' | 'malformed' | 'refusal'

/** The endpoint answered, but not with a usable completion. (Transport failures are EgressErrors.) */
export class LlmCallError extends Error {
  constructor(
    readonly failure: LlmFailure,
    message: string,
    readonly status?: number,
    readonly usage?: Usage,
  ) {
    super(message)
    this.name = 'LlmCallError'
  }
}

export interface WireClient {
  complete(req: CompletionRequest): Promise<Completion>
}

/** Providers want an object at the root of a structured-output schema; anything else is wrapped. */
export function objectRoot(schema: JsonSchema): { schema: JsonSchema; wrapped: boolean } {
  return schema.type === 'object'
    ? { schema, wrapped: false }
    : { schema: { type: 'object', properties: { value: schema }, required: ['value'], additionalProperties: false }, wrapped: true }
}

/** Text an endpoint sent back, for a message: scrubbed first, then cut (a cut through a secret would leave its prefix). */
export const cut = (text: string, scrub: (text: string) => string = (t) => t, max = 500) => scrub(text).slice(0, max)

/**
 * The provider's own error message from a JSON error body (`{ error: { message } }`), else the
 * trimmed text. Scrubbed before it is cut: a cut through a secret would leave its prefix behind.
 */
export function providerMessage(body: Buffer, scrub: (text: string) => string = (t) => t): string {
  const text = body.toString('utf8')
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown }
    const m = typeof parsed.error === 'object' ? parsed.error?.message : typeof parsed.error === 'string' ? parsed.error : parsed.message
    if (typeof m === 'string' && m.trim()) return cut(m.trim(), scrub)
  } catch {
    // not JSON
  }
  return cut(text.trim(), scrub) || '(empty body)'
}

export function parseJsonBody(body: Buffer, what: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(body.toString('utf8'))
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>
  } catch {
    // reported below
  }
  throw new LlmCallError('malformed', `the endpoint's answer is not ${what} (not a JSON object)`)
}

export const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0)
