/** FAQUrl.suggestTodo(APPLY_TOPIC_URL), appended by Java's broker and name server to topic errors. */
export const FAQ_APPLY_TOPIC = '\nSee http://rocketmq.apache.org/docs/faq/ for further details.';
