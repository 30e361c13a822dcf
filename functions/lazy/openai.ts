/** The lazily loaded code of lib/llm/openai.ts; its import of ./shared is explained there. */
import './shared'

export * from '../../lib/llm/openai'
