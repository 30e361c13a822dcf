const t=[];const m=async(n,f)=>{const a=performance.now();await f();t.push(`${n}: ${(performance.now()-a).toFixed(1)}ms`)}
const which=process.argv[2]
await m('base hono', ()=>import('hono'))
await m('ddb', ()=>import('@aws-sdk/client-dynamodb'))
if(which==='yaml') await m('yaml', async()=>{const y=await import('yaml'); y.parseDocument('a: 1\nb: [x]\n').toJS()})
if(which==='ajv') await m('ajv', async()=>{const A=(await import('ajv')).default; const f=(await import('ajv-formats')).default; const a=new A({allErrors:true,strict:false}); f(a); a.compile({type:'object',properties:{a:{type:'string',format:'uri'}}})})
if(which==='s3') await m('s3', ()=>import('@aws-sdk/client-s3').then(x=>new x.S3Client({region:'us-east-1'})))
if(which==='ssm') await m('ssm', ()=>import('@aws-sdk/client-ssm').then(x=>new x.SSMClient({region:'us-east-1'})))
if(which==='mcp') await m('mcp', ()=>Promise.all([import('@modelcontextprotocol/sdk/client/index.js'),import('@modelcontextprotocol/sdk/client/streamableHttp.js')]))
if(which==='zod') await m('zod', ()=>import('zod'))
console.log(t.join(' | '))
