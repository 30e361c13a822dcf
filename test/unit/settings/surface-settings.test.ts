/** Agent-surface settings from the environment: the budget reserve and the MCP session idle limit. */
import { describe, expect, it } from 'vitest'
import { surfaceSettingsFromEnv } from '../../../functions/settings'

describe('surface settings from the environment', () => {
  it('leaves everything to the defaults when nothing is set', () => {
    expect(surfaceSettingsFromEnv({})).toEqual({})
  })

  it('reads TOOL_BUDGET_RESERVE and MCP_SESSION_IDLE_TTL', () => {
    expect(surfaceSettingsFromEnv({ TOOL_BUDGET_RESERVE: '3', MCP_SESSION_IDLE_TTL: '1h30m' })).toEqual({
      reserve: 3,
      mcpSessionIdleMs: 90 * 60_000,
    })
    expect(surfaceSettingsFromEnv({ MCP_SESSION_IDLE_TTL: '90s' })).toEqual({ mcpSessionIdleMs: 90_000 })
  })

  it('fails the cold start on an idle limit that is not a duration from 1m to 24h', () => {
    for (const bad of ['30', 'soon', '30s', '25h', '-5m', '1d'])
      expect(() => surfaceSettingsFromEnv({ MCP_SESSION_IDLE_TTL: bad }), bad).toThrow(/MCP_SESSION_IDLE_TTL must be a duration/)
  })
})
