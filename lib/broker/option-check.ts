import { optionValidator } from '../validate.js';
import { BrokerOptionError } from './errors.js';

/** The broker's option checks: BrokerOptionError "must be an integer in [1, 64], got 0". */
export const brokerOptionCheck = optionValidator(BrokerOptionError);

/** The broker's boolean switches that quote a wrong value as JSON: `must be a boolean, got "yes"`. */
export const brokerSwitchCheck = optionValidator(BrokerOptionError, { shown: 'json' });
