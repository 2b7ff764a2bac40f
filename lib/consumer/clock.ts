/** Time source of the consumer; tests inject their own to age messages and locks without sleeping. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
