/** The lazily loaded code of lib/sandbox/index.ts; its import of ./shared is explained there. */
import './shared'

export * from '../../lib/sandbox/index'
