/** Structured logging port: one JSON object per line in production, collected in tests. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'
export interface Logger {
  log(level: LogLevel, event: string, fields?: Record<string, unknown>): void
  /** Whether a line at this level would be written; lets callers skip building costly fields. */
  enabled?(level: LogLevel): boolean
}

export const silentLogger: Logger = { log() {}, enabled: () => false }

export function jsonLogger(write: (line: string) => void, minLevel: LogLevel = 'info'): Logger {
  const order: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 }
  return {
    log(level, event, fields) {
      if (order[level] < order[minLevel]) return
      write(JSON.stringify({ level, event, ...fields }))
    },
    enabled: (level) => order[level] >= order[minLevel],
  }
}

/** Keeps every line; tests read it to prove what was (and was not) logged. */
export class MemoryLogger implements Logger {
  readonly lines: { level: LogLevel; event: string; fields: Record<string, unknown> }[] = []
  log(level: LogLevel, event: string, fields: Record<string, unknown> = {}) {
    this.lines.push({ level, event, fields })
  }
  find(event: string) {
    return this.lines.filter((l) => l.event === event)
  }
}
