/** Types of scripts/lambda-streaming-runtime.mjs (a stand-in for the Lambda runtime's streaming path). */
export interface StreamedResponse {
  statusCode: number
  headers: Record<string, string>
  cookies: string[]
  body: Buffer
}

export function installLambdaRuntime(): void

export function invokeStreaming(
  handler: unknown,
  event: unknown,
  context?: unknown,
): { response: Promise<StreamedResponse>; done: Promise<void> }
