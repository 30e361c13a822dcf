// aggregate a cpuprofile's self time by source module of a non-minified esbuild bundle
import { readFileSync, readdirSync } from 'node:fs'
const [dir] = process.argv.slice(2)
const files = readdirSync(dir).filter(f => f.endsWith('.cpuprofile'))
const marks = new Map() // url -> [[line, module]]
const modOf = (url, line) => {
  if (!marks.has(url)) {
    const m = []
    try { readFileSync(new URL(url), 'utf8').split('\n').forEach((l, i) => { const x = /^\/\/ (\S+)$/.exec(l); if (x) m.push([i, x[1]]) }) } catch {}
    marks.set(url, m)
  }
  const m = marks.get(url); let cur = url.split('/').pop()
  for (const [l, name] of m) { if (l > line) break; cur = name }
  const nm = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(cur); return nm ? nm[1] : cur
}
const agg = {}
let total = 0
for (const f of files) {
  const p = JSON.parse(readFileSync(`${dir}/${f}`, 'utf8'))
  const dt = {}; for (let i = 0; i < p.samples.length; i++) dt[p.samples[i]] = (dt[p.samples[i]] || 0) + (p.timeDeltas[i] || 0)
  for (const n of p.nodes) { const t = (dt[n.id] || 0) / 1000; if (!t) continue; total += t; const u = n.callFrame.url; const k = u.startsWith('file://') && !u.includes('[eval') ? modOf(u, n.callFrame.lineNumber) : (u || n.callFrame.functionName || '(native)'); agg[k] = (agg[k] || 0) + t }
}
console.log('total ms per profile', (total / files.length).toFixed(0))
console.log(Object.entries(agg).sort((a, b) => b[1] - a[1]).slice(0, 30).map(([k, v]) => `${(v / files.length).toFixed(1).padStart(7)} ${k}`).join('\n'))
