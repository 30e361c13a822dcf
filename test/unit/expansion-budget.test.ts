import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BudgetExceeded, countNodes, EXPANSION_LIMITS, ExpansionBudget, schemaOverBudget } from '../../lib/config/expansion-budget'
import { compile } from '../../lib/config/json-schema'
import { readOpenApi } from '../../lib/tools/types/openapi/document'
import { extractOperations } from '../../lib/tools/types/openapi/operations'
import { renderPrompt } from '../../lib/tools/types/runtime/prompt_template'
import { breadthBomb } from '../hostile/rows/expansion'

const op = (schemaRef: string) => ({
  post: {
    operationId: schemaRef.split('/').pop(),
    requestBody: { content: { 'application/json': { schema: { $ref: schemaRef } } } },
    responses: { 200: { description: 'ok' } },
  },
})

describe('expansion budgets', () => {
  it('leave the F1 breadth bomb operation out with a problem after at most its budget of nodes, and keep the sane ones', async () => {
    const doc = breadthBomb() as any
    doc.paths['/fine'] = op('#/components/schemas/S8')
    const { operations, problems } = await extractOperations(doc)
    expect(operations.map((o) => o.operationId)).toEqual(['S8'])
    expect(problems).toEqual([
      `op0: its expanded input schema (nodes) is over its budget of ${EXPANSION_LIMITS.schemaNodes.toLocaleString('en-US')}; the operation was left out`,
    ])
  })

  it('throw BudgetExceeded for a pack whose operations together pass the pack budget', async () => {
    const doc = readOpenApi(
      JSON.stringify({
        openapi: '3.0.3',
        info: {},
        paths: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`/x${i}`, op('#/components/schemas/Big')])),
        components: { schemas: { Big: { type: 'string', enum: Array.from({ length: 500 }, (_, i) => i) } } },
      }),
    )
    expect(doc.ok).toBe(true)
    await expect(
      extractOperations((doc as any).doc, { ...EXPANSION_LIMITS, schemaNodes: 1_000, packNodes: 5_000, packTools: 100 }),
    ).rejects.toThrow(BudgetExceeded)
    await expect(
      extractOperations((doc as any).doc, { ...EXPANSION_LIMITS, schemaNodes: 1_000, packNodes: 50_000, packTools: 10 }),
    ).rejects.toThrow(/number of operations is over its budget of 10/)
  })

  it('count a value only as far as the limit, whatever its size', () => {
    expect(countNodes({ a: [1, 2, { b: 3 }] }, 100)).toBe(6)
    expect(countNodes(new Array(10_000_000).fill(0), 50)).toBe(51)
    expect(schemaOverBudget({ type: 'string' })).toBeUndefined()
  })

  it('charge a parent with every unit a child spends', () => {
    const pack = new ExpansionBudget(10, 'pack')
    const one = pack.child(8, 'one')
    one.spend(5)
    expect(() => pack.child(8, 'two').spend(6)).toThrow(/pack is over its budget of 10/)
    expect(() => one.spend(4)).toThrow(/budget of/)
  })

  it('charge a bulk spend as one-at-a-time spending would: the same units used in every budget of the chain, the same refusal', () => {
    fc.assert(
      fc.property(fc.nat(40), fc.nat(40), fc.nat(40), fc.nat(30), fc.nat(60), (parentLimit, childLimit, parentUsed, childUsed, units) => {
        const run = (spend: (b: ExpansionBudget) => void) => {
          const parent = new ExpansionBudget(parentLimit, 'parent')
          const child = parent.child(childLimit, 'child')
          let refused: string | undefined
          try {
            parent.spend(parentUsed)
            child.spend(childUsed)
          } catch {
            return undefined // already over before the bulk charge: nothing to compare
          }
          try {
            spend(child)
          } catch (e) {
            refused = (e as BudgetExceeded).what
          }
          return { parent: parent.used, child: child.used, refused }
        }
        const single = run((b) => {
          for (let i = 0; i < units; i++) b.spend()
        })
        expect(run((b) => b.spendAll(units))).toEqual(single)
      }),
    )
  })

  it('keep a schema over the node budget from ajv', () => {
    const big = { type: 'object', properties: Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, { type: 'string' }])) }
    expect(() => compile(big)).toThrow(`the schema has more than ${EXPANSION_LIMITS.schemaNodes.toLocaleString('en-US')} nodes`)
  })

  it('add up a prompt before building it: 40,000 placeholders of a 1 MB input are refused, not built', () => {
    const p = { promptPrefix: '{{t}}'.repeat(40_000), inputs: [{ name: 't', type: 'string' as const }] }
    expect(() => renderPrompt(p, { t: 'x'.repeat(1_000_000) })).toThrow(/rendered prompt \(characters\) is over its budget of 1,000,000/)
    expect(renderPrompt({ promptPrefix: 'Hi {{t}}', inputs: p.inputs }, { t: 'there' })).toBe('Hi there')
  })
})
