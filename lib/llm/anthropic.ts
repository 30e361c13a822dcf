/**
 * Anthropic messages (`POST {baseUrl}/v1/messages`), as the API reference defines it: headers
 * `x-api-key` and `anthropic-version: 2023-06-01`; request `{ model, max_tokens, messages,
 * temperature?, tools?, tool_choice? }`; answer `{ type: 'message', model, content: [{ type:
 * 'text', text } | { type: 'tool_use', name, input }], stop_reason, usage: { input_tokens,
 * output_tokens, cache_creation_input_tokens?, cache_read_input_tokens? } }`; errors `{ type:
 * 'error', error: { type, message } }` with a 4xx/5xx status.
 * An output schema is asked for the long-standing way: one tool whose `input_schema` is the
 * schema, forced with `tool_choice: { type: 'tool', name }`; the tool input is the answer.
 * Input tokens are reported as the API defines the total: input + cache creation + cache reads.
 */
import type { EgressClient } from '../egress/client'
import type { Completion, CompletionRequest, WireClient } from './wire'
import { count, cut, LlmCallError, objectRoot, parseJsonBody, providerMessage } from './wire'

export const ANTHROPIC_VERSION = '2023-06-01'
const OUTPUT_TOOL = 'record_answer'

export class AnthropicMessagesClient implements WireClient {
  constructor(private readonly http: Pick<EgressClient, 'request'>) {}

  async complete(req: CompletionRequest): Promise<Completion> {
    const body: Record<string, unknown> = {
      model: req.model.modelId,
      max_tokens: req.maxTokens,
      messages: [{ role: 'user', content: req.prompt }],
    }
    if (req.temperature !== undefined) body.temperature = req.temperature
    if (req.outputSchema) {
      body.tools = [
        {
          name: OUTPUT_TOOL,
          description: 'Record the answer. Call this exactly once with the complete answer as its input.',
          input_schema: objectRoot(req.outputSchema).schema,
        },
      ]
      body.tool_choice = { type: 'tool', name: OUTPUT_TOOL }
    }
    const base = req.model.provider.baseUrl
    const res = await this.http.request({
      tenant: req.tenant,
      url: `${base}${/\/v1$/.test(base) ? '' : '/v1'}/messages`,
      method: 'POST',
      headers: {
        ...req.headers,
        'content-type': 'application/json',
        accept: 'application/json',
        'anthropic-version': ANTHROPIC_VERSION,
        ...(req.apiKey ? { 'x-api-key': req.apiKey } : {}),
      },
      body: JSON.stringify(body),
      timeoutMs: req.timeoutMs,
      maxBytes: 8 * 1024 * 1024,
      signal: req.signal,
      redirect: 'manual',
      sensitiveHeaders: ['x-api-key'],
    })
    if (res.status < 200 || res.status > 299)
      throw new LlmCallError('http', `the model endpoint answered HTTP ${res.status}: ${providerMessage(res.body, req.scrub)}`, res.status)
    const answer = parseJsonBody(res.body, 'a message')
    const u = (answer.usage ?? {}) as Record<string, unknown>
    const usage = {
      inputTokens: count(u.input_tokens) + count(u.cache_creation_input_tokens) + count(u.cache_read_input_tokens),
      outputTokens: count(u.output_tokens),
    }
    if (!Array.isArray(answer.content))
      throw new LlmCallError('malformed', "the endpoint's answer is not a message (no content array)", undefined, usage)
    const blocks = answer.content as { type?: unknown; text?: unknown; name?: unknown; input?: unknown }[]
    const text = blocks
      .filter((b) => b.type === 'text' && typeof b.text === 'string')
      .map((b) => b.text as string)
      .join('')
    const tool = req.outputSchema ? blocks.find((b) => b.type === 'tool_use' && b.name === OUTPUT_TOOL) : undefined
    if (answer.stop_reason === 'refusal')
      throw new LlmCallError('refusal', `the model refused${text ? `: ${cut(text, req.scrub)}` : ''}`, undefined, usage)
    return {
      text,
      ...(tool ? { data: { value: tool.input } } : {}),
      usage,
      ...(typeof answer.stop_reason === 'string' ? { stopReason: answer.stop_reason } : {}),
      ...(typeof answer.model === 'string' ? { providerModel: answer.model } : {}),
    }
  }
}
