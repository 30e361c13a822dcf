/**
 * OpenAI chat completions (`POST {baseUrl}/chat/completions`), as the API reference defines it:
 * request `{ model, messages, max_completion_tokens, temperature?, response_format? }`, answer
 * `{ model, choices: [{ message: { content, refusal? }, finish_reason }], usage: { prompt_tokens,
 * completion_tokens } }`, errors `{ error: { message, type, code } }` with a 4xx/5xx status.
 * An output schema is asked for with `response_format: { type: 'json_schema', json_schema }`
 * (non-strict, so any schema the tenant writes is accepted).
 */
import type { EgressClient } from '../egress/client'
import type { Completion, CompletionRequest, WireClient } from './wire'
import { count, cut, LlmCallError, objectRoot, parseJsonBody, providerMessage } from './wire'

export class OpenAiChatClient implements WireClient {
  constructor(private readonly http: Pick<EgressClient, 'request'>) {}

  async complete(req: CompletionRequest): Promise<Completion> {
    const body: Record<string, unknown> = {
      model: req.model.modelId,
      messages: [{ role: 'user', content: req.prompt }],
      max_completion_tokens: req.maxTokens,
    }
    if (req.temperature !== undefined) body.temperature = req.temperature
    if (req.outputSchema) {
      const root = objectRoot(req.outputSchema)
      body.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: root.schema, strict: false } }
    }
    const res = await this.http.request({
      tenant: req.tenant,
      url: `${req.model.provider.baseUrl}/chat/completions`,
      method: 'POST',
      headers: {
        ...req.headers,
        'content-type': 'application/json',
        accept: 'application/json',
        ...(req.apiKey ? { authorization: `Bearer ${req.apiKey}` } : {}),
      },
      body: JSON.stringify(body),
      timeoutMs: req.timeoutMs,
      maxBytes: 8 * 1024 * 1024,
      signal: req.signal,
      redirect: 'manual',
    })
    if (res.status < 200 || res.status > 299)
      throw new LlmCallError('http', `the model endpoint answered HTTP ${res.status}: ${providerMessage(res.body, req.scrub)}`, res.status)
    const answer = parseJsonBody(res.body, 'a chat completion')
    const usageRaw = (answer.usage ?? {}) as Record<string, unknown>
    const usage = { inputTokens: count(usageRaw.prompt_tokens), outputTokens: count(usageRaw.completion_tokens) }
    const choice = Array.isArray(answer.choices) ? (answer.choices[0] as Record<string, unknown> | undefined) : undefined
    const message = choice?.message as { content?: unknown; refusal?: unknown } | undefined
    if (!message)
      throw new LlmCallError('malformed', "the endpoint's answer is not a chat completion (no choices[0].message)", undefined, usage)
    if (typeof message.refusal === 'string' && message.refusal)
      throw new LlmCallError('refusal', `the model refused: ${cut(message.refusal, req.scrub)}`, undefined, usage)
    const text = typeof message.content === 'string' ? message.content : ''
    return {
      text,
      usage,
      ...(typeof choice?.finish_reason === 'string' ? { stopReason: choice.finish_reason } : {}),
      ...(typeof answer.model === 'string' ? { providerModel: answer.model } : {}),
    }
  }
}
