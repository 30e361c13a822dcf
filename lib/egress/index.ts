/** Egress guard and outbound HTTP client: the only way the service calls the outside world. */
export * from './address'
export * from './allow-list'
export * from './client'
export * from './connector'
export * from './errors'
export * from './guard'
export * from './own-endpoints'
export * from './tenant-allow-list'
