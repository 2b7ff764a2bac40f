import { MessageValidationError } from './errors.js';
import { TOPIC_MAX_LENGTH, isNotAllowedSendTopic, isTopicOrGroupIllegal } from '../../protocol/resource-names.js';

/**
 * A message to send.
 * @category Producing
 */
export interface Message {
  /** The topic to send to. */
  topic: string;
  /** The body; a string is sent as UTF-8. */
  body: Buffer | Uint8Array | string;
  /** One tag (property TAGS); consumers filter on it. */
  tags?: string;
  /** Business keys (property KEYS, joined by spaces). */
  keys?: string | string[];
  /** User properties; names reserved by RocketMQ are rejected. */
  properties?: Record<string, string>;
  /** Delay level 1..18 (property DELAY); 0 or absent sends at once. */
  delayTimeLevel?: number;
  /** 5.x timer message: deliver this many ms after the broker stores it (property TIMER_DELAY_MS, Java's setDelayTimeMs). */
  delayMs?: number;
  /** 5.x timer message: deliver at this epoch ms (property TIMER_DELIVER_MS, Java's setDeliverTimeMs); a past time delivers at once. */
  deliverAt?: number | Date;
  /** The user flag stored with the message. */
  flag?: number;
  /** Property WAIT: the broker answers after the store succeeded (default true). */
  waitStoreMsgOK?: boolean;
}

/**
 * Topic rules of Java's Validators.checkTopic and isNotAllowedSendTopic (Validators.checkMessage):
 * non-blank, ≤ 127 characters (the client's limit also for retry topics), [%|a-zA-Z0-9_-] (the
 * rules the broker applies, protocol/resource-names.ts), and not a topic no client may send to.
 */
export function validateTopic(topic: unknown, createTopicKey = 'TBW102'): string {
  if (typeof topic !== 'string' || topic.trim().length === 0)
    throw new MessageValidationError('topic', 'topic is blank');
  if (topic.length > TOPIC_MAX_LENGTH)
    throw new MessageValidationError(
      'topic',
      `topic "${topic.slice(0, 20)}…" is longer than ${TOPIC_MAX_LENGTH} characters`,
    );
  if (isTopicOrGroupIllegal(topic))
    throw new MessageValidationError('topic', `topic "${topic}" may only contain letters, digits, %, |, _ and -`);
  if (topic === createTopicKey)
    throw new MessageValidationError('topic', `topic ${topic} is the auto-create template topic`);
  if (isNotAllowedSendTopic(topic))
    throw new MessageValidationError('topic', `sending message to topic ${topic} is forbidden`);
  return topic;
}
