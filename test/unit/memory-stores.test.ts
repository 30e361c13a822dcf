import { MemoryBlobStore } from '../../lib/stores/memory/blob-store'
import { MemoryDocumentStore } from '../../lib/stores/memory/document-store'
import { blobStoreContract } from '../contract/blob-store.contract'
import { documentStoreContract } from '../contract/document-store.contract'

documentStoreContract('memory', async (clock) => new MemoryDocumentStore(clock))
blobStoreContract('memory', async () => new MemoryBlobStore())
