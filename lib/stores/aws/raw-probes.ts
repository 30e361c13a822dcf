/**
 * Bare DynamoDB requests with no adapter logic around them: the floors that bench/ measures the
 * stores against (one GetItem, one BatchGetItem, one Query). They live here because only lib/stores/aws may import
 * the AWS SDK; they use the same DocumentClient and read options as DynamoDocumentStore, so a
 * ratio against them measures the adapter, cascade and service, not the client.
 */
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb'
import { BatchGetCommand, GetCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb'

/** One strongly consistent GetItem; the item as returned. */
export async function rawGetItem(doc: DynamoDBDocumentClient, table: string, key: Record<string, string>): Promise<Record<string, unknown> | undefined> {
  const out = await doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))
  return out.Item
}

/** One strongly consistent BatchGetItem of a few keys (no retry of UnprocessedKeys: a floor, not an adapter). */
export async function rawBatchGetItems(doc: DynamoDBDocumentClient, table: string, keys: Record<string, string>[]): Promise<Record<string, unknown>[]> {
  const out = await doc.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: keys, ConsistentRead: true } } }))
  return out.Responses?.[table] ?? []
}

/** One strongly consistent Query page of `hashKey = value AND begins_with(rangeKey, prefix)`. */
export async function rawQueryPage(
  doc: DynamoDBDocumentClient,
  table: string,
  hash: { name: string; value: string },
  range: { name: string; prefix: string },
): Promise<{ items: Record<string, unknown>[]; more: boolean }> {
  const out = await doc.send(
    new QueryCommand({
      TableName: table,
      ConsistentRead: true,
      KeyConditionExpression: '#h = :h AND begins_with(#r, :p)',
      ExpressionAttributeNames: { '#h': hash.name, '#r': range.name },
      ExpressionAttributeValues: { ':h': hash.value, ':p': range.prefix },
    }),
  )
  return { items: out.Items ?? [], more: out.LastEvaluatedKey !== undefined }
}

/** One PutItem of a plain item (bench set-up). */
export async function rawPutItem(doc: DynamoDBDocumentClient, table: string, item: Record<string, unknown>): Promise<void> {
  await doc.send(new PutCommand({ TableName: table, Item: item }))
}

/**
 * The cold-start floor's whole data path (bench/fixtures/bare-lambda.ts): a plain DynamoDBClient
 * — no DocumentClient, no adapter — and one GetItem. Nothing else of this module is loaded with it.
 */
export function bareGetItem(endpoint: string | undefined): (table: string, key: Record<string, string>) => Promise<Record<string, unknown> | undefined> {
  const ddb = new DynamoDBClient(endpoint ? { endpoint } : {})
  return async (table, key) => {
    const out = await ddb.send(new GetItemCommand({ TableName: table, Key: Object.fromEntries(Object.entries(key).map(([k, v]) => [k, { S: v }])) }))
    return out.Item
  }
}
