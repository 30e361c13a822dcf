/**
 * Bare DynamoDB requests with no adapter logic around them: the floors that bench/ measures the
 * stores against (one GetItem, one BatchGetItem, one Query). They use the same client and read
 * options as DynamoDocumentStore, so a ratio against them measures the adapter, cascade and
 * service, not the client.
 */
import type { DynamoClient } from './dynamo/client'

/** One strongly consistent GetItem; the item as returned. */
export async function rawGetItem(
  db: DynamoClient,
  table: string,
  key: Record<string, string>,
): Promise<Record<string, unknown> | undefined> {
  const out = await db.getItem({ TableName: table, Key: key, ConsistentRead: true })
  return out.Item
}

/** One strongly consistent BatchGetItem of a few keys (no retry of UnprocessedKeys: a floor, not an adapter). */
export async function rawBatchGetItems(
  db: DynamoClient,
  table: string,
  keys: Record<string, string>[],
): Promise<Record<string, unknown>[]> {
  const out = await db.batchGetItem({ RequestItems: { [table]: { Keys: keys, ConsistentRead: true } } })
  return out.Responses[table] ?? []
}

/** One strongly consistent Query page of `hashKey = value AND begins_with(rangeKey, prefix)`. */
export async function rawQueryPage(
  db: DynamoClient,
  table: string,
  hash: { name: string; value: string },
  range: { name: string; prefix: string },
): Promise<{ items: Record<string, unknown>[]; more: boolean }> {
  const out = await db.query({
    TableName: table,
    ConsistentRead: true,
    KeyConditionExpression: '#h = :h AND begins_with(#r, :p)',
    ExpressionAttributeNames: { '#h': hash.name, '#r': range.name },
    ExpressionAttributeValues: { ':h': hash.value, ':p': range.prefix },
  })
  return { items: out.Items, more: out.LastEvaluatedKey !== undefined }
}

/** One PutItem of a plain item (bench set-up). */
export async function rawPutItem(db: DynamoClient, table: string, item: Record<string, unknown>): Promise<void> {
  await db.putItem({ TableName: table, Item: item })
}
