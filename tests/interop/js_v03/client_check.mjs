// The official A2A JS SDK v0.3 client (A2AClient) against an a2a-runtime server (protocol v0.3).
//
// Usage: node client_check.mjs BASE_URL [--binding jsonrpc|rest]
// `--binding rest`: the SDK's `Client` over its `RestTransport` (HTTP+JSON, `/v1/...`), on the
// interface its `ClientFactory` picks from the card for a client preferring HTTP+JSON.
// Prints one line per check (`PASS name` / `FAIL name: reason`) and `N passed, M failed`.

import { randomUUID } from 'node:crypto';
import { A2AClient, ClientFactory, RestTransportFactory, TaskNotFoundError } from '@a2a-js/sdk/client';

const base = process.argv[2].replace(/\/$/, '');
const flag = process.argv.indexOf('--binding');
const rest = flag > 0 && process.argv[flag + 1] === 'rest';
const TIMESTAMP = 'https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1';

let extensions = null;
const seen = [];
const fetchImpl = async (url, init = {}) => {
  const headers = new Headers(init.headers || {});
  if (extensions) headers.set('X-A2A-Extensions', extensions.join(','));
  const response = await fetch(url, { ...init, headers });
  seen.push(response);
  return response;
};

let passed = 0;
let failed = 0;
async function check(name, f) {
  try {
    let timer;
    const limit = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error('no answer within 20 s')), 20000);
    });
    await Promise.race([f(), limit]).finally(() => clearTimeout(timer));
    passed += 1;
    console.log(`PASS ${name}`);
  } catch (e) {
    failed += 1;
    console.log(`FAIL ${name}: ${e && e.stack ? e.stack.split('\n').slice(0, 3).join(' | ') : e}`);
  }
}
function expect(cond, what) {
  if (!cond) throw new Error(what);
}
// JSON-RPC answers are `{result | error}` (A2AClient); REST results come as they are (Client).
function ok(response) {
  if (rest) return response;
  if ('error' in response) throw new Error(`error ${JSON.stringify(response.error)}`);
  return response.result;
}
function user(text, extra = {}) {
  return { kind: 'message', role: 'user', messageId: randomUUID(), parts: [{ kind: 'text', text }], ...extra };
}
const texts = (parts) => parts.filter((p) => p.kind === 'text').map((p) => p.text);

const rpc = await A2AClient.fromCardUrl(`${base}/.well-known/agent-card.json`, { fetchImpl });
const card = await rpc.getAgentCard();
const client = rest
  ? await new ClientFactory({
      transports: [new RestTransportFactory({ fetchImpl })],
      preferredTransports: ['HTTP+JSON'],
    }).createFromAgentCard(card)
  : rpc;

await check('card', async () => {
  expect(card.protocolVersion === '0.3.0', `protocolVersion ${card.protocolVersion}`);
  expect(card.url.replace(/\/$/, '') === base, `url ${card.url}`);
  expect(card.preferredTransport === 'JSONRPC', `preferredTransport ${card.preferredTransport}`);
  const http = (card.additionalInterfaces || []).find((i) => i.transport === 'HTTP+JSON');
  expect(http && http.url.replace(/\/$/, '') === base, `HTTP+JSON interface ${JSON.stringify(card.additionalInterfaces)}`);
});

let done;
await check('send_blocking', async () => {
  const task = ok(await client.sendMessage({ message: user('hello'), configuration: { blocking: true } }));
  expect(task.kind === 'task', JSON.stringify(task));
  expect(task.status.state === 'completed', task.status.state);
  expect(task.artifacts.some((a) => texts(a.parts).some((t) => t.includes('hello'))), JSON.stringify(task.artifacts));
  done = task;
});

await check('stream', async () => {
  const events = [];
  for await (const ev of client.sendMessageStream({ message: user('stream') })) events.push(ev);
  expect(events[0].kind === 'task', JSON.stringify(events[0]));
  const chunks = events.filter((e) => e.kind === 'artifact-update');
  expect(JSON.stringify(chunks.map((c) => texts(c.artifact.parts))) === '[["chunk 1"],["chunk 2"],["chunk 3"]]', JSON.stringify(chunks));
  const last = events[events.length - 1];
  expect(last.kind === 'status-update' && last.final === true && last.status.state === 'completed', JSON.stringify(last));
});

await check('get_task', async () => {
  const task = ok(await client.getTask({ id: done.id, historyLength: 1 }));
  expect(task.id === done.id && task.status.state === 'completed', JSON.stringify(task.status));
  expect(task.history.length === 1, JSON.stringify(task.history));
});

await check('get_task_not_found', async () => {
  if (rest) {
    try {
      await client.getTask({ id: 'no-such-task' });
    } catch (e) {
      expect(e instanceof TaskNotFoundError, `${e}`);
      return;
    }
    throw new Error('no error');
  }
  const r = await client.getTask({ id: 'no-such-task' });
  expect('error' in r && r.error.code === -32001, JSON.stringify(r));
});

await check('cancel', async () => {
  const task = ok(await client.sendMessage({ message: user('wait'), configuration: { blocking: false } }));
  expect(['submitted', 'working'].includes(task.status.state), task.status.state);
  const canceled = ok(await client.cancelTask({ id: task.id }));
  expect(canceled.status.state === 'canceled', canceled.status.state);
});

await check('resubscribe', async () => {
  const task = ok(await client.sendMessage({ message: user('wait'), configuration: { blocking: false } }));
  const stream = client.resubscribeTask({ id: task.id });
  const first = await stream.next();
  expect(first.value.kind === 'task' && first.value.id === task.id, JSON.stringify(first.value));
  ok(await client.cancelTask({ id: task.id }));
  const events = [];
  for await (const ev of stream) events.push(ev);
  const last = events[events.length - 1];
  expect(last.kind === 'status-update' && last.final && last.status.state === 'canceled', JSON.stringify(events));
});

await check('push_config_crud', async () => {
  const url = 'https://push.example.com/hook';
  const made = ok(await client.setTaskPushNotificationConfig({ taskId: done.id, pushNotificationConfig: { id: 'p1', url } }));
  expect(made.taskId === done.id && made.pushNotificationConfig.id === 'p1', JSON.stringify(made));
  const got = ok(await client.getTaskPushNotificationConfig({ id: done.id, pushNotificationConfigId: 'p1' }));
  expect(got.pushNotificationConfig.url === url, JSON.stringify(got));
  const listed = ok(await client.listTaskPushNotificationConfig({ id: done.id }));
  expect(listed.length === 1 && listed[0].pushNotificationConfig.id === 'p1', JSON.stringify(listed));
  const deleted = await client.deleteTaskPushNotificationConfig({ id: done.id, pushNotificationConfigId: 'p1' });
  if (!rest) expect(!('error' in deleted) && deleted.result === null, JSON.stringify(deleted));
  const empty = ok(await client.listTaskPushNotificationConfig({ id: done.id }));
  expect(empty.length === 0, JSON.stringify(empty));
});

await check('extensions', async () => {
  extensions = [TIMESTAMP];
  const mark = seen.length;
  const task = ok(await client.sendMessage({ message: user('hello') }));
  extensions = null;
  const echoed = seen[mark].headers.get('x-a2a-extensions') || '';
  expect(echoed.includes(TIMESTAMP), `echo ${echoed}`);
  expect(JSON.stringify(task).includes('timestamp'), JSON.stringify(task));
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
