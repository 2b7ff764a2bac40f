import { RocketwireError } from '../../protocol/index.js';

/** An option outside its allowed range or of the wrong type; `option` names it. */
export class ConsumerOptionError extends RocketwireError {
  readonly option: string;
  constructor(option: string, message: string) {
    super(`consumer option "${option}": ${message}`);
    this.option = option;
  }
}

/** The consumer was used in a state that does not allow the call (e.g. subscribe after start). */
export class ConsumerStateError extends RocketwireError {
  readonly state: string;
  constructor(state: string, message: string) {
    super(message);
    this.state = state;
  }
}

/** A broker answered a consumer request with an unexpected code. */
export class ConsumerRequestError extends RocketwireError {
  readonly code: number;
  readonly remark: string | null;
  readonly addr: string;
  constructor(what: string, addr: string, code: number, remark: string | null) {
    super(`${what} to ${addr} failed: code ${code}${remark ? ` (${remark})` : ''}`);
    this.code = code;
    this.remark = remark;
    this.addr = addr;
  }
}
