/** The consumer hands user code protocol's decoded stored message (MessageExt). */
export type { MessageExt } from '../../../protocol/index.js';
