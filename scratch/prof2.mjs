import { readFileSync, readdirSync } from 'node:fs'
const dir = process.argv[2]; const f = readdirSync(dir).filter(f => f.endsWith('.cpuprofile'))[0]
const p = JSON.parse(readFileSync(`${dir}/${f}`, 'utf8'))
const dt = {}; for (let i = 0; i < p.samples.length; i++) dt[p.samples[i]] = (dt[p.samples[i]] || 0) + (p.timeDeltas[i] || 0)
const byFn = {}, byFile = {}
for (const n of p.nodes) { const t = (dt[n.id] || 0) / 1000; if (!t) continue; const u = n.callFrame.url.replace(/^.*\/(wt\/coldstart|node_modules)\//, ''); const k = `${n.callFrame.functionName || '(anon)'} ${u}:${n.callFrame.lineNumber}`; byFn[k] = (byFn[k] || 0) + t; byFile[u || '(native)'] = (byFile[u || '(native)'] || 0) + t }
const top = (o, n) => Object.entries(o).sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${v.toFixed(0).padStart(6)} ${k}`).join('\n')
console.log(top(byFile, 25)); console.log('---'); console.log(top(byFn, 30))
