/* Resource types for the links declared in sst.config.ts (what `sst` would generate). */
import 'sst'
declare module 'sst' {
  export interface Resource {
    Documents: { name: string; type: 'sst.aws.Dynamo' }
    Blobs: { name: string; type: 'sst.aws.Bucket' }
    ToolUsage: { name: string; type: 'sst.aws.Dynamo' }
    Processes: { name: string; type: 'sst.aws.Dynamo' }
    ObservedLimits: { name: string; type: 'sst.aws.Dynamo' }
    QuotaCounters: { name: string; type: 'sst.aws.Dynamo' }
  }
}
export {}
