/** The TypeScript stripper of code mode (sucrase, pure JS), loaded by the first script that needs it. */
import './shared'
import { transform } from 'sucrase'

/** Types removed, everything else (newer syntax, line breaks) left as written: the model's line N stays line N. */
export const stripTypes = (source: string): string =>
  transform(source, { transforms: ['typescript'], disableESTransforms: true, keepUnusedImports: true }).code
