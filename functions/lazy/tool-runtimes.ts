/** The lazily loaded code of lib/tools/types/runtime/index.ts; its import of ./shared is explained there. */
import './shared'

export * from '../../lib/tools/types/runtime/index'
