/** The counting rules of spec §14.4, one named test each, on the real dispatcher and the memory store. */
import { beforeEach, describe, expect, it } from 'vitest'
import { success, toolError } from '../../../lib/calls/outcome'
import { ServerToolsError } from '../../../lib/errors'
import { ManualClock } from '../../../lib/runtime/clock'
import { MemoryLogger } from '../../../lib/runtime/logger'
import { MemoryToolUsageStore } from '../../../lib/stores/memory/tool-usage-store'
import { whoamiTool } from '../../../lib/tools/builtins/whoami'
import type { Tool } from '../../../lib/tools/contracts'
import type { AfterCallEvent, BeforeCallEvent, CallerIdentity, ToolGate } from '../../../lib/tools/dispatcher'
import { ToolDispatcher } from '../../../lib/tools/dispatcher'
import { describedNames, familyOfName, listedNames, UsageCounter } from '../../../lib/usage/counting'
import { UsageRecorder } from '../../../lib/usage/recorder'
import { usageRole } from '../../../lib/usage/role'

const tool = (name: string, invoke: Tool['invoke'], over: Partial<Tool> = {}): Tool => ({
  name,
  description: `${name} for tests`,
  inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
  labels: [],
  primary: true,
  deferred: false,
  source: 'project',
  typeId: 'test',
  invoke,
  ...over,
})

/** The mechanical half: reads from the client (spec's `client_file_read`). */
const clientFileRead = tool('client_file_read', async (p) => success({ text: `contents of ${String(p.path)}` }))
/** A wrapper whose mechanical half is another tool, called on the delegate path. */
const fileRead = tool('file_read', (p, ctx) => ctx.tools.delegate('client_file_read', p))
/** A wrapper that (wrongly) calls its half as a sibling: both count. */
const fileReadAsSibling = tool('file_read_sibling', (p, ctx) => ctx.tools.call('client_file_read', p))
/** A script calling a sibling tool, the way `vance.tools.call` does. */
const script = tool('report_script', async (_p, ctx) => {
  const who = await ctx.tools.call('whoami', {})
  return success({ ran: true, who: who.content })
})
const failing = tool('always_failing', async () => toolError('upstream said no'))
const throwing = tool('always_throwing', async () => {
  throw new Error('boom')
})
const strict = tool('strict_args', async () => success('ok'), {
  inputSchema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
})
const scriptCallingFailure = tool('script_with_failing_sibling', async (_p, ctx) =>
  success({ inner: (await ctx.tools.call('always_failing', {})).isError }),
)

const all = [clientFileRead, fileRead, fileReadAsSibling, script, failing, throwing, strict, scriptCallingFailure, whoamiTool]
const gate: ToolGate = {
  resolve: async (name) => all.find((t) => t.name === name),
  names: async () => all.map((t) => t.name),
}

let clock: ManualClock
let store: MemoryToolUsageStore
let recorder: UsageRecorder
let dispatcher: ToolDispatcher
let log: MemoryLogger
const caller: CallerIdentity = { tenant: 'acme', project: 'shop', subject: 'agent', processId: 'p-1', role: 'coder' }

async function counts() {
  await recorder.flush()
  return Object.fromEntries(
    (await store.list('acme', 'shop')).map((r) => [
      `${r.role}/${r.tool}`,
      { calls: r.calls, discoveryHits: r.discoveryHits, listedHits: r.listedHits },
    ]),
  )
}

beforeEach(() => {
  clock = new ManualClock(Date.UTC(2026, 2, 1, 12, 0, 0))
  store = new MemoryToolUsageStore()
  log = new MemoryLogger()
  recorder = new UsageRecorder({ store, clock, log, flushDelayMs: 0 })
  dispatcher = new ToolDispatcher(log)
  dispatcher.addListener(new UsageCounter(recorder))
})

describe('counting calls (spec §14.4)', () => {
  it('counts a successful model call once, under the caller role, with the family and an ISO-8601 lastCallAt', async () => {
    expect((await dispatcher.call(gate, caller, 'whoami', {})).isError).toBe(false)
    await recorder.flush()
    expect(await store.list('acme', 'shop')).toEqual([
      {
        role: 'coder',
        tool: 'whoami',
        family: 'whoami',
        calls: 1,
        discoveryHits: 0,
        listedHits: 0,
        lastCallAt: '2026-03-01T12:00:00.000Z',
      },
    ])
  })

  it('does not count a call whose tool answered isError', async () => {
    expect((await dispatcher.call(gate, caller, 'always_failing', {})).isError).toBe(true)
    expect(await counts()).toEqual({})
  })

  it('does not count a call whose tool threw', async () => {
    expect((await dispatcher.call(gate, caller, 'always_throwing', {})).isError).toBe(true)
    expect(await counts()).toEqual({})
  })

  it('does not count an unknown tool or a call with invalid arguments', async () => {
    expect((await dispatcher.call(gate, caller, 'no_such_tool', {})).isError).toBe(true)
    expect((await dispatcher.call(gate, caller, 'strict_args', { n: 'x' })).isError).toBe(true)
    expect(await counts()).toEqual({})
  })

  it("counts a script's sibling call and the script itself, one each", async () => {
    await dispatcher.call(gate, caller, 'report_script', {})
    expect(await counts()).toEqual({
      'coder/report_script': { calls: 1, discoveryHits: 0, listedHits: 0 },
      'coder/whoami': { calls: 1, discoveryHits: 0, listedHits: 0 },
    })
  })

  it('counts the script but not its failed sibling call', async () => {
    await dispatcher.call(gate, caller, 'script_with_failing_sibling', {})
    expect(await counts()).toEqual({ 'coder/script_with_failing_sibling': { calls: 1, discoveryHits: 0, listedHits: 0 } })
  })

  it('counts a wrapper call once and not its delegated half (file_read → client_file_read)', async () => {
    const out = await dispatcher.call(gate, caller, 'file_read', { path: 'a.txt' })
    expect(out).toEqual({ isError: false, content: { text: 'contents of a.txt' } })
    expect(await counts()).toEqual({ 'coder/file_read': { calls: 1, discoveryHits: 0, listedHits: 0 } })
  })

  it('counts both halves when a wrapper calls its half as an ordinary sibling instead of delegating', async () => {
    await dispatcher.call(gate, caller, 'file_read_sibling', { path: 'a.txt' })
    expect(await counts()).toEqual({
      'coder/client_file_read': { calls: 1, discoveryHits: 0, listedHits: 0 },
      'coder/file_read_sibling': { calls: 1, discoveryHits: 0, listedHits: 0 },
    })
  })

  it('counts the delegated tool when it is called directly', async () => {
    await dispatcher.call(gate, caller, 'client_file_read', { path: 'a.txt' })
    await dispatcher.call(gate, caller, 'file_read', { path: 'a.txt' })
    expect(await counts()).toEqual({
      'coder/client_file_read': { calls: 1, discoveryHits: 0, listedHits: 0 },
      'coder/file_read': { calls: 1, discoveryHits: 0, listedHits: 0 },
    })
  })

  it('lets a progress listener hear the delegated half through its normal hooks, marked delegate', async () => {
    const heard: string[] = []
    dispatcher.addListener({
      beforeCall: (e: BeforeCallEvent) => heard.push(`before ${e.tool.name} depth=${e.depth} delegate=${e.delegate}`),
      afterCall: (e: AfterCallEvent) => heard.push(`after ${e.tool.name} depth=${e.depth} delegate=${e.delegate}`),
    })
    await dispatcher.call(gate, caller, 'file_read', { path: 'a.txt' })
    expect(heard).toEqual([
      'before file_read depth=0 delegate=false',
      'before client_file_read depth=1 delegate=true',
      'after client_file_read depth=1 delegate=true',
      'after file_read depth=0 delegate=false',
    ])
  })

  it('calls beforeDelegate/afterDelegate instead of the normal hooks on the delegate path when a listener has them', async () => {
    const heard: string[] = []
    dispatcher.addListener({
      beforeCall: (e) => heard.push(`beforeCall ${e.tool.name}`),
      afterCall: (e) => heard.push(`afterCall ${e.tool.name}`),
      beforeDelegate: (e) => heard.push(`beforeDelegate ${e.tool.name}`),
      afterDelegate: (e) => heard.push(`afterDelegate ${e.tool.name}`),
    })
    await dispatcher.call(gate, caller, 'file_read', { path: 'a.txt' })
    expect(heard).toEqual([
      'beforeCall file_read',
      'beforeDelegate client_file_read',
      'afterDelegate client_file_read',
      'afterCall file_read',
    ])
  })

  it('keeps a throwing listener from changing the outcome or the count', async () => {
    dispatcher.addListener({
      afterCall: () => {
        throw new Error('listener bug')
      },
    })
    expect(await dispatcher.call(gate, caller, 'whoami', {})).toMatchObject({ isError: false })
    expect(await counts()).toEqual({ 'coder/whoami': { calls: 1, discoveryHits: 0, listedHits: 0 } })
    expect(log.find('dispatch.listener_failed')).toHaveLength(1)
  })

  it('counts a call without a role under _unknown', async () => {
    await dispatcher.call(gate, { tenant: 'acme', project: 'shop', subject: 'cli' }, 'whoami', {})
    expect(Object.keys(await counts())).toEqual(['_unknown/whoami'])
  })

  it('coalesces many calls of one key into one write with the latest instant and the day count', async () => {
    for (let i = 0; i < 50; i++) {
      await dispatcher.call(gate, caller, 'whoami', {})
      clock.advance(1000)
    }
    await recorder.flush()
    expect(store.roundTrips).toBe(1)
    expect((await store.list('acme', 'shop'))[0]).toMatchObject({ calls: 50, lastCallAt: '2026-03-01T12:00:49.000Z' })
    expect(await store.listDays('acme', 'shop', '2026-03-01', '2026-03-01')).toEqual([{ role: caller.role, day: '2026-03-01', calls: 50 }])
  })
})

describe('counting refusals and calls from code', () => {
  const full = tool('sandboxed', async () => {
    throw new ServerToolsError('OVERLOADED', 'the sandbox is at capacity', { retryAfterSeconds: 2 })
  })
  /** What execute_code does: its sibling calls carry origin code. */
  const codeScript = tool('code_script', async (_p, ctx) => {
    await ctx.tools.call('whoami', {}, { origin: 'code' })
    await ctx.tools.call('whoami', {}, { origin: 'code' })
    return success('done')
  })
  const more: ToolGate = {
    resolve: async (name) => [full, codeScript, ...all].find((t) => t.name === name),
    names: async () => [full, codeScript, ...all].map((t) => t.name),
  }
  const rows = async () => {
    await recorder.flush()
    return Object.fromEntries(
      (await store.list('acme', 'shop')).map((r) => [
        `${r.role}/${r.tool}`,
        { calls: r.calls, codeCalls: r.codeCalls ?? 0, refusals: r.refusals ?? 0 },
      ]),
    )
  }

  it('counts a call the admission refused as a refusal of that tool under the caller role, not as a call', async () => {
    dispatcher.setAdmission(async () => ({ message: 'Quota reached.', retryAfterSeconds: 30, reason: 'quota:tenant/1' }))
    expect((await dispatcher.call(gate, caller, 'whoami', {})).isError).toBe(true)
    expect(await rows()).toEqual({ 'coder/whoami': { calls: 0, codeCalls: 0, refusals: 1 } })
  })

  it('counts a tool that answered OVERLOADED as a refusal, and tells listeners its class', async () => {
    const classes: string[] = []
    dispatcher.addListener({ refused: (e) => classes.push(`${e.refusal.class} ${e.refusal.reason}`) })
    expect((await dispatcher.call(more, caller, 'sandboxed', {})).isError).toBe(true)
    expect(await rows()).toEqual({ 'coder/sandboxed': { calls: 0, codeCalls: 0, refusals: 1 } })
    expect(classes).toEqual(['capacity capacity'])
  })

  it('counts sibling calls made from code under the process role, marked as from code, and the script itself as a plain call', async () => {
    await dispatcher.call(more, caller, 'code_script', {})
    expect(await rows()).toEqual({
      'coder/code_script': { calls: 1, codeCalls: 0, refusals: 0 },
      'coder/whoami': { calls: 2, codeCalls: 2, refusals: 0 },
    })
  })

  it('writes a flood of refusals of one tool as one increment per flush, not one per refusal', async () => {
    dispatcher.setAdmission(async () => ({ message: 'Quota reached.', retryAfterSeconds: 30, reason: 'quota:tenant/1' }))
    for (let i = 0; i < 200; i++) await dispatcher.call(gate, caller, 'whoami', {})
    await recorder.flush()
    expect(store.roundTrips).toBe(1)
    expect((await store.list('acme', 'shop'))[0]).toMatchObject({ calls: 0, refusals: 200 })
  })
})

describe('the role a call counts under', () => {
  it('is the recipe name when the process has a recipe', () => {
    expect(usageRole({ recipe: 'coder', engine: 'ford' })).toBe('coder')
  })
  it('falls back to the engine name when the process has no recipe', () => {
    expect(usageRole({ engine: 'ford' })).toBe('ford')
    expect(usageRole({ recipe: '  ', engine: 'ford' })).toBe('ford')
  })
  it('falls back to _unknown when the process names neither, or there is no process', () => {
    expect(usageRole({})).toBe('_unknown')
    expect(usageRole({ recipe: null, engine: '' })).toBe('_unknown')
    expect(usageRole(undefined)).toBe('_unknown')
  })
})

describe('reading meta-tool answers', () => {
  it('takes one name per described entry, deduplicated', () => {
    expect(describedNames({ tools: [{ name: 'a' }, { name: 'b' }, { name: 'a' }], unknown: ['z'] })).toEqual(['a', 'b'])
  })
  it('takes every name a tool_list answer showed, in context and available', () => {
    expect(listedNames({ count: 3, inContext: ['tool_list', 'whoami'], available: ['gmail__send'] })).toEqual([
      'tool_list',
      'whoami',
      'gmail__send',
    ])
  })
  it('groups names into families: the pack before __, else the first _ segment, else the name', () => {
    expect([familyOfName('gmail__users_send'), familyOfName('doc_note_add'), familyOfName('whoami')]).toEqual(['gmail', 'doc', 'whoami'])
  })
})
