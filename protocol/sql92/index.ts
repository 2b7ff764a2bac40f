export { SqlParseError } from './errors.js';
export { compileSql92, type Sql92Filter, type Sql92Properties } from './sql92-filter.js';
