import { createSandbox } from '../lib/sandbox'
const sb = createSandbox('inline', {})
const r = await sb.run({ source: 'function f() { return Promise.resolve().then(f) } f(); 1', timeoutMs: 1000 } as any)
console.log(JSON.stringify(r))
const r2 = await sb.run({ source: 'var k = 0; function f() { k++; return Promise.resolve().then(f) } f(); 1', timeoutMs: 1000 } as any)
console.log(JSON.stringify(r2))
process.exit(0)
