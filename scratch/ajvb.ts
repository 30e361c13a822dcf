import Ajv from 'ajv'
import addFormats from 'ajv-formats'
const t0 = performance.now()
const a = new Ajv({ allErrors: true, strict: false }); addFormats(a)
const f = a.compile({ type: 'object', required: ['type', 'description'], properties: { type: { type: 'string', minLength: 1 }, labels: { type: 'array', items: { type: 'string' } } } })
const g = a.compile({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false })
f({ type: 'x', description: 'y' }); g({ path: 'a' })
;(globalThis as any).__ajvtime = performance.now() - t0
