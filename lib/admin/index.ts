export * from './admin-client.js';
export * from './errors.js';
export {
  AdminStatsCommands,
  compute24HourSum,
  type BrokerStatsData,
  type BrokerStatsItem,
  type StatsAllOptions,
  type StatsAllRow,
} from './admin-stats.js';
export { formatMessageTrace, type MessageTraceQuery, type MessageTraceView } from './admin-trace.js';
