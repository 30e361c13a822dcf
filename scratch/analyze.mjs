import { build } from 'esbuild'
const r = await build({ entryPoints: { api: 'functions/api.ts' }, outdir: '/tmp/cs2', outExtension: { '.js': '.mjs' }, splitting: true, chunkNames: 'chunks/[name]-[hash]', bundle: true, platform: 'node', target: 'node22', format: 'esm', minify: true, metafile: true, mainFields: ['module','main'], external: ['quickjs-emscripten','quickjs-emscripten-core','@jitl/*', 'ajv', 'ajv-formats'], banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" }, logLevel: 'error' })
for (const [out, o] of Object.entries(r.metafile.outputs)) {
  if (!out.endsWith('.mjs')) continue
  const by = {}
  for (const [f, i] of Object.entries(o.inputs)) { const m = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(f); const k = m ? m[1] : f.split('/').slice(0,2).join('/'); by[k] = (by[k]||0) + i.bytesInOutput }
  console.log(out, (o.bytes/1024).toFixed(0)+'K', Object.entries(by).sort((a,b)=>b[1]-a[1]).slice(0, process.argv[2] && out.endsWith('api.mjs') ? 40 : 6).map(([k,v])=>`${k} ${(v/1024).toFixed(0)}K`).join(', '))
}
if (process.argv[3]) for (const [f, i] of Object.entries(r.metafile.inputs)) for (const im of i.imports) if (im.path.includes(process.argv[3])) console.log(f, '->', im.path, im.kind)
