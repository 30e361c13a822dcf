/**
 * The cold-start floor's whole data path (bench/fixtures/bare-lambda.ts): the AWS SDK's plain
 * DynamoDBClient — no adapter, none of our code — and one GetItem. It is the reference the cold
 * start is measured against (issue 13), so it stays on the SDK even though the stores do not.
 */
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb'

export function bareGetItem(
  endpoint: string | undefined,
): (table: string, key: Record<string, string>) => Promise<Record<string, unknown> | undefined> {
  const ddb = new DynamoDBClient(endpoint ? { endpoint } : {})
  return async (table, key) => {
    const out = await ddb.send(
      new GetItemCommand({ TableName: table, Key: Object.fromEntries(Object.entries(key).map(([k, v]) => [k, { S: v }])) }),
    )
    return out.Item
  }
}
