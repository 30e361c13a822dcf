/** The lazily loaded code of lib/llm/anthropic.ts; its import of ./shared is explained there. */
import './shared'

export * from '../../lib/llm/anthropic'
