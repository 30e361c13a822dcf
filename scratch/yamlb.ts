import { parseDocument } from 'yaml'
const t0 = performance.now()
parseDocument('type: doc_lookup\ndescription: Read.\nlabels: [docs]\nparameters:\n  path: documents/x.md\n').toJS()
;(globalThis as any).__t = performance.now() - t0
