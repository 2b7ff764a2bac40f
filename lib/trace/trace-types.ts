/**
 * The records of message trace, as Java's client keeps them (client/trace/TraceContext, TraceBean,
 * TraceType; common/message/MessageType; ConsumeReturnType). Field names are Java's, so that the
 * encoder reads like TraceDataEncoder.
 */

/**
 * TraceType: what a record describes.
 * @category Metrics and trace
 */
export type TraceType = 'Pub' | 'SubBefore' | 'SubAfter' | 'EndTransaction' | 'Recall';

/** MessageType, written by its ordinal (Pub and EndTransaction records). */
export const TraceMessageType = {
  Normal_Msg: 0,
  Trans_Msg_Half: 1,
  Trans_msg_Commit: 2,
  Delay_Msg: 3,
  Order_Msg: 4,
} as const;
export type TraceMessageType = (typeof TraceMessageType)[keyof typeof TraceMessageType];

/** ConsumeReturnType, written by its ordinal as a SubAfter record's contextCode. */
export const ConsumeReturnType = {
  SUCCESS: 0,
  TIME_OUT: 1,
  EXCEPTION: 2,
  RETURNNULL: 3,
  FAILED: 4,
} as const;
export type ConsumeReturnType = (typeof ConsumeReturnType)[keyof typeof ConsumeReturnType];

/** AccessChannel: a CLOUD SubAfter record leaves out its time and group, and goes to a per-region topic. */
export type AccessChannel = 'LOCAL' | 'CLOUD';

/**
 * One message of a record (TraceBean). Java appends a null String as "null", so the fields a
 * message may lack (tags, keys) are `string | null` and are written that way.
 * @category Metrics and trace
 */
export interface TraceBean {
  /** The message's topic. */
  topic: string;
  /** The message's id (UNIQ_KEY). */
  msgId: string | null;
  /** The broker's message id (store host and commit-log offset). */
  offsetMsgId: string | null;
  /** The message's tag. */
  tags: string | null;
  /** The message's keys, space-joined. */
  keys: string | null;
  /** The address of the broker that stored the message. */
  storeHost: string | null;
  /** The body's length, in bytes. */
  bodyLength: number;
  /** TraceMessageType ordinal. */
  msgType: number;
  /** SubBefore: the message's reconsumeTimes; 0 in the other records. */
  retryTimes: number;
  /** EndTransaction only. */
  transactionId?: string | null;
  /** EndTransaction only: LocalTransactionState name (COMMIT_MESSAGE, ROLLBACK_MESSAGE, UNKNOW). */
  transactionState?: string;
  /** EndTransaction only. */
  fromTransactionCheck?: boolean;
}

/**
 * One trace record (TraceContext); Sub records carry one bean per consumed message.
 * @category Metrics and trace
 */
export interface TraceContext {
  /** What the record describes: Pub, SubBefore, SubAfter, EndTransaction or Recall. */
  traceType: TraceType;
  /** ms since the epoch: when the send or the consumption began. */
  timeStamp: number;
  /** MSG_REGION of the broker; a record whose region is null is dropped (AsyncTraceDispatcher#sendTraceData). */
  regionId: string | null;
  /** Producer or consumer group, without namespace. */
  groupName: string;
  /** ms; Sub records: per message of the call. */
  costTime: number;
  /** The send or the consumption succeeded. */
  success: boolean;
  /** Pairs a SubBefore with its SubAfter (a message id of its own). */
  requestId: string;
  /** SubAfter: ConsumeReturnType ordinal. */
  contextCode: number;
  /** LOCAL or CLOUD (Java's AccessChannel), when the record says. */
  accessChannel?: AccessChannel;
  /** The messages the record is about (one for Pub, one per message of the call for Sub). */
  traceBeans: TraceBean[];
}
