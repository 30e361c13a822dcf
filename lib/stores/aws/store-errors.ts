/**
 * What a DynamoDB failure means to the caller, in one place for every table. A tenant's input can
 * reach DynamoDB's own limits — an item over 400 KB, a number DynamoDB or a JS number cannot hold —
 * and those are the tenant's errors (4xx naming the limit), never a 500; throttling is a 503.
 * Everything else stays what it was (the caller's own mapping, or a 500 that is logged).
 */
import { ServerToolsError } from '../../errors'

/** DynamoDB's item size limit (attribute names and values together). */
export const DYNAMO_ITEM_LIMIT_BYTES = 400 * 1024

const THROTTLING = new Set(['ProvisionedThroughputExceededException', 'ThrottlingException', 'RequestLimitExceeded'])

export const errorName = (e: unknown) => (e as { name?: string } | null)?.name

/** `e` as the error the caller should see; `table` names the table in the message ("the processes table"). */
export function storeError(e: unknown, table: string): unknown {
  const name = errorName(e) ?? ''
  if (THROTTLING.has(name))
    return new ServerToolsError('THROTTLED', `${table} is throttling requests; retry shortly`, undefined, { cause: e })
  const message = String((e as { message?: unknown } | null)?.message ?? '')
  if (name === 'ValidationException' && /item size|maximum allowed size/i.test(message))
    return new ServerToolsError(
      'TOO_LARGE',
      `the record would be larger than the ${DYNAMO_ITEM_LIMIT_BYTES / 1024} KB one stored item may take in ${table}`,
      undefined,
      { cause: e },
    )
  // numbers: the marshaller refuses what a JS number cannot hold exactly, DynamoDB what it cannot store (38 digits)
  if (e instanceof RangeError || (name === 'ValidationException' && /number overflow|number underflow/i.test(message)))
    return new ServerToolsError('INVALID_INPUT', `a number in this request cannot be stored exactly: ${message.slice(0, 200)}`, undefined, {
      cause: e,
    })
  return e
}
