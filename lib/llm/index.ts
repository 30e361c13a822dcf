/** LLM calls for prompt-template tools: the model catalog and the OpenAI/Anthropic wire clients. */
import type { EgressClient } from '../egress/client'
import { AnthropicMessagesClient } from './anthropic'
import type { WireType } from '../models/documents'
import { OpenAiChatClient } from './openai'
import type { WireClient } from './wire'

export * from './anthropic'
export * from './catalog'
export * from './openai'
export * from './wire'

/** One client per wire type, all on the same egress client. */
export function wireClients(http: Pick<EgressClient, 'request'>): Record<WireType, WireClient> {
  return { openai: new OpenAiChatClient(http), anthropic: new AnthropicMessagesClient(http) }
}
