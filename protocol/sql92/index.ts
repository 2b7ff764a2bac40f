export { SqlLimitError, SqlParseError, type SqlLimitName } from './errors.js';
export {
  SQL92_DEFAULT_MAX_LENGTH,
  SQL92_DEFAULT_MAX_NODES,
  compileSql92,
  type EvalMeter,
  type Sql92Filter,
  type Sql92Limits,
  type Sql92Properties,
} from './sql92-filter.js';
