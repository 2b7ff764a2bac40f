/**
 * One problem the capture doctor found (`rocketwire decode --doctor`), with the evidence a user
 * needs to find it in the capture again, and what it usually means. The HTML report
 * (`decode --report`) lists the same findings.
 */
export interface Finding {
  /** The check that found it, a stable kebab-case id, e.g. 'long-poll-loop', 'lag-growing'. */
  readonly check: string;
  /** 'error' for what loses or stalls messages, 'warning' for what costs time or looks wrong. */
  readonly severity: 'error' | 'warning';
  /** One line: what was seen, with figures ("pull on T/broker-a/3 returned at once 412 times in 9.8 s"). */
  readonly summary: string;
  /** What this usually means and what to look at. */
  readonly meaning: string;
  /** Evidence: where in the capture. Times are capture timestamps in epoch milliseconds. */
  readonly evidence: FindingEvidence;
}

export interface FindingEvidence {
  /** First and last time the problem was seen. */
  readonly firstMs: number;
  readonly lastMs: number;
  /** "client-ip:port -> broker-ip:port" of the flow, when one flow shows it. */
  readonly flow?: string;
  /** Opaque of a request that shows it (the first one), when there is one. */
  readonly opaque?: number;
  /** "topic/brokerName/queueId" (brokerName may be empty when the capture does not name it). */
  readonly queue?: string;
  /** Consumer group, when the problem is a group's. */
  readonly group?: string;
  /** Request or response code involved, by number. */
  readonly code?: number;
  /** How many times it was seen. */
  readonly count: number;
}
