/**
 * Lifecycle of a consumer, as Java's ServiceState (STARTING and SHUTTING_DOWN while start() / shutdown() run).
 * @category Consuming
 */
export type ConsumerState = 'CREATED' | 'STARTING' | 'RUNNING' | 'SHUTTING_DOWN' | 'SHUTDOWN';
