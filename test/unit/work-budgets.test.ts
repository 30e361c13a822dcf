import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { BudgetExceeded, budgetFor, EXPANSION_LIMITS, WORK_BUDGETS } from '../../lib/config/expansion-budget'

const doc = readFileSync(new URL('../../docs/reference/limits.md', import.meta.url), 'utf8')

describe('the work budget registry', () => {
  it('lists every work item in docs/reference/limits.md with its number', () => {
    for (const [item, budget] of Object.entries(WORK_BUDGETS)) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${item}\``))
      expect(row, `no row for ${item}`).toBeDefined()
      expect(row).toContain(budget.limit.toLocaleString('en-US'))
    }
  })

  it('keeps the expansion limits of issue 10 as views of the same numbers', () => {
    expect(EXPANSION_LIMITS).toEqual({
      schemaNodes: WORK_BUDGETS.schemaNodes.limit,
      packNodes: WORK_BUDGETS.packNodes.limit,
      packTools: WORK_BUDGETS.packTools.limit,
      promptChars: WORK_BUDGETS.promptChars.limit,
      schemaBytes: WORK_BUDGETS.schemaBytes.limit,
      packBytes: WORK_BUDGETS.packBytes.limit,
      operationSteps: WORK_BUDGETS.operationSteps.limit,
      packSteps: WORK_BUDGETS.packSteps.limit,
      manifestBytes: WORK_BUDGETS.manifestBytes.limit,
      modelChain: WORK_BUDGETS.modelChain.limit,
    })
  })

  it('hands out a counter that refuses the unit after the limit and names it', () => {
    const budget = budgetFor('packTools', 'the tools of this pack')
    budget.spend(WORK_BUDGETS.packTools.limit)
    expect(() => budget.spend()).toThrow(new BudgetExceeded(WORK_BUDGETS.packTools.limit, 'the tools of this pack'))
  })
})
