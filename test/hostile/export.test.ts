/** The layer export over what a tenant can store (issue 21, third pass: D3), against `npm start`. */
import { rowSet } from './rows/export'
import { hostileSuite } from './suite'

hostileSuite(rowSet)
