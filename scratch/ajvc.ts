import Ajv from 'ajv'
import addFormats from 'ajv-formats'
const g = globalThis as any
const t0 = performance.now()
const a = new Ajv({ allErrors: true, strict: false, validateSchema: g.VS, addUsedSchema: false }); 
const t1 = performance.now()
if (g.F) addFormats(a)
const t2 = performance.now()
const f = a.compile({ type: 'object', required: ['type', 'description'], properties: { type: { type: 'string', minLength: 1 }, labels: { type: 'array', items: { type: 'string' } } } })
const t3 = performance.now()
const h = a.compile({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false })
const t4 = performance.now()
g.__r = [t1-t0, t2-t1, t3-t2, t4-t3].map(x=>x.toFixed(1)).join(' ')
