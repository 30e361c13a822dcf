/** Structured logging port: one JSON object per line in production, collected in tests. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error'
export interface Logger {
  log(level: LogLevel, event: string, fields?: Record<string, unknown>): void
  /** Whether a line at this level would be written; lets callers skip building costly fields. */
  enabled?(level: LogLevel): boolean
}

export const silentLogger: Logger = { log() {}, enabled: () => false }

export interface JsonLoggerOptions {
  /** Fields of the moment (request id, trace and span id, tenant…); an event's own fields win. */
  context?: () => Record<string, unknown> | undefined
  /** Applied to each finished line (removes secret values in every encoding they may take). */
  scrub?: (line: string) => string
}

export function jsonLogger(write: (line: string) => void, minLevel: LogLevel = 'info', opts: JsonLoggerOptions = {}): Logger {
  const order: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 }
  return {
    log(level, event, fields) {
      if (order[level] < order[minLevel]) return
      const line = JSON.stringify({ level, event, ...opts.context?.(), ...fields })
      write(opts.scrub ? opts.scrub(line) : line)
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
