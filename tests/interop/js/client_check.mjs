#!/usr/bin/env node
// Drive an A2A v1.0 server with the official JS SDK client (@a2a-js/sdk 1.x).
//
// Usage:
//   node client_check.mjs URL [--binding jsonrpc|rest] [--timeout SECONDS]
//                             [--ext-uri URI] [--only a,b,c] [-v]
//
// URL is the agent's base URL; the card is fetched from
// URL/.well-known/agent-card.json (the SDK resolves the relative path
// ".well-known/agent-card.json" against URL, so a URL with a path component
// must end in "/").
//
// Echo-agent conventions expected from the server (user text):
//   "stream" -> WORKING, 3 appended artifact chunks, COMPLETED
//   "wait"   -> WORKING until canceled;  "ask" -> INPUT_REQUIRED
//   anything else T -> artifact "echo: T", COMPLETED
//
// Prints "PASS name", "FAIL name: reason" or "SKIP name: reason" per check,
// then "N passed, M failed". Exit status 1 if any check failed, 2 when the
// card cannot be fetched.
//
// All calls go through the SDK Client. A wrapping fetchImpl only *observes*
// request/response headers (the SDK does not expose response headers), which
// is how the A2A-Extensions echo is read.

import { randomUUID } from 'node:crypto';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
  ServiceParameters,
  withA2AExtensions,
} from '@a2a-js/sdk/client';
import { Role, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import {
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';

const DEFAULT_EXT_URI = 'https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1';
const BINDINGS = { jsonrpc: 'JSONRPC', rest: 'HTTP+JSON' };
const TERMINAL = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

// ---------------------------------------------------------------- args ----

function parseArgs(argv) {
  const args = { binding: 'jsonrpc', timeout: 20, extUri: DEFAULT_EXT_URI, only: null, verbose: false, token: null };
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const take = () => {
      if (i + 1 >= argv.length) usage(`missing value for ${a}`);
      return argv[++i];
    };
    if (a === '--binding') args.binding = take();
    else if (a.startsWith('--binding=')) args.binding = a.slice(10);
    else if (a === '--timeout') args.timeout = Number(take());
    else if (a === '--ext-uri') args.extUri = take();
    else if (a === '--token') args.token = take();
    else if (a === '--only') args.only = new Set(['card', ...take().split(',')]);
    else if (a === '-v' || a === '--verbose') args.verbose = true;
    else if (a === '-h' || a === '--help') usage();
    else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else rest.push(a);
  }
  if (rest.length !== 1) usage('expected exactly one URL');
  if (!BINDINGS[args.binding]) usage(`bad --binding ${args.binding}`);
  args.url = rest[0];
  return args;
}

function usage(msg) {
  if (msg) console.error(msg);
  console.error('usage: node client_check.mjs URL [--binding jsonrpc|rest] [--timeout S] [--ext-uri URI] [--only a,b] [--token T] [-v]');
  process.exit(64);
}

// ------------------------------------------------------------- helpers ----

class Skip extends Error {}
class CheckFailed extends Error {}

function expect(cond, reason) {
  if (!cond) throw new CheckFailed(reason);
}

const stateName = (s) => taskStateToJSON(s);
const tsKey = (uri) => uri.replace(/^[a-z]+:\/\//, '') + '/timestamp';

function userMessage(text, taskId = '', contextId = '') {
  return {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text } }],
    taskId,
    contextId,
  };
}

const partsText = (parts) =>
  (parts ?? []).filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('\n');
const artifactTexts = (task) => (task.artifacts ?? []).map((a) => partsText(a.parts));
const kind = (ev) => ev?.payload?.$case ?? '<empty>';

function evState(ev) {
  if (kind(ev) === 'task') return ev.payload.value.status?.state;
  if (kind(ev) === 'statusUpdate') return ev.payload.value.status?.state;
  return undefined;
}

function evTaskId(ev) {
  const v = ev.payload?.value ?? {};
  return kind(ev) === 'task' ? v.id : v.taskId;
}

const describe = (events) =>
  events.map((e) => kind(e) + (evState(e) !== undefined ? `(${stateName(evState(e))})` : '')).join(' -> ');

// ts-proto request types have no optional defaults: an omitted `status`
// serializes as "UNRECOGNIZED" and an omitted push-list `pageSize` as null.
// Fill them in the way a type-checked TypeScript caller has to.
const listTasksRequest = (fields) => ({
  tenant: '',
  contextId: '',
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageToken: '',
  statusTimestampAfter: undefined,
  ...fields,
});
const listPushRequest = (taskId) => ({ tenant: '', taskId, pageSize: 0, pageToken: '' });

function isTask(result) {
  // Client.sendMessage resolves to the unwrapped Task or Message.
  return result && typeof result === 'object' && 'status' in result && !('messageId' in result);
}

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new CheckFailed(`${what} timed out after ${ms / 1000}s`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// -------------------------------------------------------------- runner ----

class Runner {
  constructor(args) {
    this.args = args;
    this.binding = BINDINGS[args.binding];
    this.passed = 0;
    this.failed = 0;
    this.skipped = 0;
    this.exchanges = [];
    const recordingFetch = async (input, init) => {
      // A bearer token, when the agent requires one: sent on every request.
      if (args.token) {
        const headers = new Headers(init?.headers ?? {});
        headers.set('Authorization', `Bearer ${args.token}`);
        init = { ...init, headers };
      }
      const response = await fetch(input, init);
      this.exchanges.push({
        url: String(input instanceof Request ? input.url : input),
        requestHeaders: new Headers(init?.headers ?? {}),
        responseHeaders: response.headers,
        status: response.status,
      });
      return response;
    };
    this.factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [
          new JsonRpcTransportFactory({ fetchImpl: recordingFetch }),
          new RestTransportFactory({ fetchImpl: recordingFetch }),
        ],
        preferredTransports: [this.binding],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl: recordingFetch }),
      }),
    );
    this.client = null;
    this.card = null;
    this.echoTask = null;
  }

  report(status, name, reason = '') {
    if (status === 'PASS') {
      this.passed++;
      console.log(`PASS ${name}` + (reason && this.args.verbose ? ` (${reason})` : ''));
    } else if (status === 'SKIP') {
      this.skipped++;
      console.log(`SKIP ${name}: ${reason}`);
    } else {
      this.failed++;
      console.log(`FAIL ${name}: ${reason}`);
    }
  }

  async check(name, fn) {
    if (this.args.only && !this.args.only.has(name)) return;
    try {
      const note = await withTimeout(fn.call(this), this.args.timeout * 1000, name);
      this.report('PASS', name, note ?? '');
    } catch (e) {
      if (e instanceof Skip) this.report('SKIP', name, e.message);
      else if (e instanceof CheckFailed) this.report('FAIL', name, e.message);
      else {
        if (this.args.verbose) console.error(e);
        this.report('FAIL', name, `${e?.constructor?.name ?? 'Error'}: ${e?.message ?? e}`);
      }
    }
  }

  needStreaming() {
    if (!this.card.capabilities?.streaming) throw new Skip('card does not declare capabilities.streaming');
  }

  needPush() {
    if (!this.card.capabilities?.pushNotifications) throw new Skip('card does not declare capabilities.pushNotifications');
  }

  extDeclared() {
    return (this.card.capabilities?.extensions ?? []).some((e) => e.uri === this.args.extUri);
  }

  extOptions() {
    return { serviceParameters: ServiceParameters.create(withA2AExtensions(this.args.extUri)) };
  }

  echoedSince(mark) {
    return this.exchanges
      .slice(mark)
      .filter((x) => !x.url.endsWith('agent-card.json'))
      .map((x) => x.responseHeaders.get('a2a-extensions') ?? '');
  }

  async sendTask(text, { returnImmediately = false, taskId = '', contextId = '', options } = {}) {
    const params = { message: userMessage(text, taskId, contextId) };
    if (returnImmediately) params.configuration = { returnImmediately: true };
    const result = await this.client.sendMessage(params, options);
    expect(isTask(result), `expected a Task result, got ${JSON.stringify(result).slice(0, 200)}`);
    return result;
  }

  async sendStream(text, options) {
    const events = [];
    for await (const ev of this.client.sendMessageStream({ message: userMessage(text) }, options)) events.push(ev);
    return events;
  }

  async startWaitTask() {
    const task = await this.sendTask('wait', { returnImmediately: true });
    expect(!TERMINAL.has(task.status?.state), `"wait" task is already terminal: ${stateName(task.status?.state)}`);
    return task;
  }

  async cancelQuietly(id) {
    try {
      await this.client.cancelTask({ id });
    } catch {
      /* ignore */
    }
  }

  // -------------------------------------------------------------- checks --

  async checkCard() {
    this.client = await this.factory.createFromUrl(this.args.url);
    this.card = await this.client.getAgentCard();
    const ifaces = this.card.supportedInterfaces ?? [];
    expect(this.card.name, 'card has no name');
    const match = ifaces.filter((i) => i.protocolBinding.toUpperCase() === this.binding);
    expect(match.length > 0, `no ${this.binding} interface in ${JSON.stringify(ifaces)}`);
    expect(
      this.client.transport.protocolName.toUpperCase() === this.binding,
      `SDK picked ${this.client.transport.protocolName}, wanted ${this.binding}`,
    );
    expect(
      match.some((i) => /^1\.0(\.|$)/.test(i.protocolVersion)),
      `no ${this.binding} interface with protocolVersion 1.0`,
    );
    return `${this.card.name} via ${match[0].url}`;
  }

  async checkSendBlocking() {
    const task = await this.sendTask('hello');
    expect(task.status?.state === TaskState.TASK_STATE_COMPLETED, `state ${stateName(task.status?.state)}, want COMPLETED`);
    const texts = artifactTexts(task);
    expect(texts.includes('echo: hello'), `artifact texts ${JSON.stringify(texts)}`);
    expect(task.id && task.contextId, 'missing id/contextId');
    this.echoTask = task;
    return task.id;
  }

  async checkStream() {
    this.needStreaming();
    const events = await this.sendStream('stream');
    expect(events.length > 0, 'no events');
    expect(kind(events[0]) === 'task', `first event is ${kind(events[0])}, want task (${describe(events)})`);
    const taskId = events[0].payload.value.id;
    for (const ev of events.slice(1)) {
      expect(['statusUpdate', 'artifactUpdate', 'task'].includes(kind(ev)), `unexpected ${kind(ev)} (${describe(events)})`);
      expect(evTaskId(ev) === taskId, `event for task ${evTaskId(ev)}, want ${taskId}`);
    }
    expect(evState(events.at(-1)) === TaskState.TASK_STATE_COMPLETED, `does not end COMPLETED (${describe(events)})`);
    expect(events.some((e) => evState(e) === TaskState.TASK_STATE_WORKING), `no WORKING (${describe(events)})`);
    const chunks = events.filter((e) => kind(e) === 'artifactUpdate').map((e) => e.payload.value);
    expect(chunks.length === 3, `${chunks.length} artifact updates, want 3`);
    expect(new Set(chunks.map((c) => c.artifact?.artifactId)).size === 1, 'chunks use different artifactIds');
    expect(
      chunks.slice(1).every((c) => c.append === true),
      `append flags ${JSON.stringify(chunks.map((c) => c.append))}, want [false,true,true]`,
    );
    return describe(events) + (chunks.at(-1).lastChunk ? '' : ' [note: no lastChunk=true]');
  }

  async checkStreamEcho() {
    this.needStreaming();
    const events = await this.sendStream('hello stream');
    expect(kind(events[0]) === 'task', `first event is ${kind(events[0])}, want task`);
    const texts = events.filter((e) => kind(e) === 'artifactUpdate').map((e) => partsText(e.payload.value.artifact?.parts));
    expect(texts.includes('echo: hello stream'), `artifact texts ${JSON.stringify(texts)}`);
    expect(evState(events.at(-1)) === TaskState.TASK_STATE_COMPLETED, `does not end COMPLETED (${describe(events)})`);
    return describe(events);
  }

  async checkGetTask() {
    if (!this.echoTask) throw new Skip('send_blocking did not produce a task');
    const task = await this.client.getTask({ id: this.echoTask.id });
    expect(task.id === this.echoTask.id, `got task ${task.id}`);
    expect(task.status?.state === TaskState.TASK_STATE_COMPLETED, `state ${stateName(task.status?.state)}`);
    expect(artifactTexts(task).includes('echo: hello'), `artifact texts ${JSON.stringify(artifactTexts(task))}`);
    const trimmed = await this.client.getTask({ id: this.echoTask.id, historyLength: 0 });
    expect((trimmed.history ?? []).length === 0, `historyLength=0 returned ${trimmed.history.length} messages`);
    return `history=${task.history.length}`;
  }

  async checkGetTaskNotFound() {
    try {
      await this.client.getTask({ id: `no-such-task-${randomUUID()}` });
    } catch (e) {
      expect(e instanceof TaskNotFoundError, `wrong error ${e?.constructor?.name}: ${e?.message}`);
      return e.constructor.name;
    }
    throw new CheckFailed('GetTask of an unknown id succeeded');
  }

  async checkListTasks() {
    if (!this.echoTask) throw new Skip('send_blocking did not produce a task');
    const resp = await this.client.listTasks(listTasksRequest({ contextId: this.echoTask.contextId }));
    const ids = resp.tasks.map((t) => t.id);
    expect(ids.includes(this.echoTask.id), `task not listed; got ${JSON.stringify(ids)}`);
    expect(resp.tasks.every((t) => (t.artifacts ?? []).length === 0), 'artifacts returned without includeArtifacts');
    const resp2 = await this.client.listTasks(listTasksRequest({ contextId: this.echoTask.contextId, includeArtifacts: true }));
    const mine = resp2.tasks.find((t) => t.id === this.echoTask.id);
    expect(mine && artifactTexts(mine).includes('echo: hello'), 'includeArtifacts=true lacks the echo artifact');
    return `${resp.tasks.length} in context`;
  }

  async checkReturnImmediatelyAndCancel() {
    const task = await this.startWaitTask();
    const canceled = await this.client.cancelTask({ id: task.id });
    expect(canceled.id === task.id, `cancel returned task ${canceled.id}`);
    expect(canceled.status?.state === TaskState.TASK_STATE_CANCELED, `cancel returned ${stateName(canceled.status?.state)}`);
    const again = await this.client.getTask({ id: task.id });
    expect(again.status?.state === TaskState.TASK_STATE_CANCELED, `GetTask after cancel: ${stateName(again.status?.state)}`);
    return `returnImmediately gave ${stateName(task.status?.state)}`;
  }

  async checkCancelTerminal() {
    if (!this.echoTask) throw new Skip('send_blocking did not produce a task');
    try {
      await this.client.cancelTask({ id: this.echoTask.id });
    } catch (e) {
      expect(e instanceof TaskNotCancelableError, `wrong error ${e?.constructor?.name}: ${e?.message}`);
      return e.constructor.name;
    }
    throw new CheckFailed('CancelTask of a COMPLETED task succeeded');
  }

  async checkInputRequired() {
    const task = await this.sendTask('ask');
    expect(task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED, `state ${stateName(task.status?.state)}, want INPUT_REQUIRED`);
    const follow = await this.sendTask('more', { taskId: task.id, contextId: task.contextId });
    expect(follow.id === task.id, `follow-up created task ${follow.id}`);
    expect(follow.status?.state === TaskState.TASK_STATE_COMPLETED, `follow-up state ${stateName(follow.status?.state)}`);
    expect(artifactTexts(follow).includes('echo: more'), `follow-up artifacts ${JSON.stringify(artifactTexts(follow))}`);
    return 'INPUT_REQUIRED -> COMPLETED';
  }

  async checkResubscribe() {
    this.needStreaming();
    const task = await this.startWaitTask();
    const events = [];
    let gotFirst;
    const first = new Promise((resolve) => (gotFirst = resolve));
    const consumer = (async () => {
      for await (const ev of this.client.resubscribeTask({ id: task.id })) {
        events.push(ev);
        gotFirst();
      }
    })();
    consumer.catch(() => {});
    try {
      await withTimeout(Promise.race([first, consumer]), (this.args.timeout * 1000) / 2, 'first subscribe event');
      expect(events.length > 0, 'stream ended without events');
      expect(kind(events[0]) === 'task', `first event is ${kind(events[0])}, want task`);
      expect(events[0].payload.value.id === task.id, `first event is task ${events[0].payload.value.id}`);
      const canceled = await this.client.cancelTask({ id: task.id });
      expect(canceled.status?.state === TaskState.TASK_STATE_CANCELED, `cancel returned ${stateName(canceled.status?.state)}`);
      await withTimeout(consumer, (this.args.timeout * 1000) / 2, 'stream end after cancel');
    } finally {
      await this.cancelQuietly(task.id);
    }
    expect(evState(events.at(-1)) === TaskState.TASK_STATE_CANCELED, `does not end CANCELED (${describe(events)})`);
    return describe(events);
  }

  async checkSubscribeTerminal() {
    this.needStreaming();
    if (!this.echoTask) throw new Skip('send_blocking did not produce a task');
    try {
      for await (const _ of this.client.resubscribeTask({ id: this.echoTask.id })) {
        throw new CheckFailed('SubscribeToTask of a COMPLETED task yielded events');
      }
    } catch (e) {
      if (e instanceof CheckFailed) throw e;
      expect(e instanceof UnsupportedOperationError, `wrong error ${e?.constructor?.name}: ${e?.message}`);
      return e.constructor.name;
    }
    throw new CheckFailed('SubscribeToTask of a COMPLETED task did not fail');
  }

  async checkPushConfigCrud() {
    this.needPush();
    const task = await this.startWaitTask();
    try {
      const cfgId = `cfg-${randomUUID().slice(0, 8)}`;
      const created = await this.client.createTaskPushNotificationConfig({
        taskId: task.id,
        id: cfgId,
        url: 'https://example.com/hook',
        token: 'interop-token',
      });
      expect(created.id === cfgId, `create returned id ${created.id}`);
      expect(created.url === 'https://example.com/hook', `create returned url ${created.url}`);
      const got = await this.client.getTaskPushNotificationConfig({ taskId: task.id, id: cfgId });
      expect(got.id === cfgId && got.url === 'https://example.com/hook', `get returned ${JSON.stringify(got)}`);
      const listed = await this.client.listTaskPushNotificationConfig(listPushRequest(task.id));
      expect(listed.configs.some((c) => c.id === cfgId), `list returned ${JSON.stringify(listed.configs.map((c) => c.id))}`);
      await this.client.deleteTaskPushNotificationConfig({ taskId: task.id, id: cfgId });
      const after = await this.client.listTaskPushNotificationConfig(listPushRequest(task.id));
      expect(!after.configs.some((c) => c.id === cfgId), 'config still listed after delete');
      return 'create/get/list/delete';
    } finally {
      await this.cancelQuietly(task.id);
    }
  }

  async checkExtHeaderEcho() {
    if (!this.extDeclared()) throw new Skip(`card does not declare extension ${this.args.extUri}`);
    const mark = this.exchanges.length;
    const task = await this.sendTask('hello', { options: this.extOptions() });
    const sent = this.exchanges.slice(mark).map((x) => x.requestHeaders.get('a2a-extensions') ?? '');
    expect(sent.some((s) => s.includes(this.args.extUri)), `the SDK did not send A2A-Extensions (${JSON.stringify(sent)})`);
    const echoed = this.echoedSince(mark);
    expect(
      echoed.some((e) => e.split(',').map((s) => s.trim()).includes(this.args.extUri)),
      `response A2A-Extensions header was ${JSON.stringify(echoed)}`,
    );
    const key = tsKey(this.args.extUri);
    const stamps = (task.artifacts ?? []).map((a) => a.metadata?.[key]).filter(Boolean);
    return `A2A-Extensions: ${echoed.at(-1)}` + (stamps.length ? `; ${key}=${stamps[0]}` : '; no timestamp metadata');
  }

  async run() {
    await this.check('card', this.checkCard);
    if (!this.client || !this.card) {
      console.log(`${this.passed} passed, ${Math.max(this.failed, 1)} failed`);
      return 2;
    }
    await this.check('send_blocking', this.checkSendBlocking);
    await this.check('stream', this.checkStream);
    await this.check('stream_echo', this.checkStreamEcho);
    await this.check('get_task', this.checkGetTask);
    await this.check('get_task_not_found', this.checkGetTaskNotFound);
    await this.check('list_tasks', this.checkListTasks);
    await this.check('return_immediately_and_cancel', this.checkReturnImmediatelyAndCancel);
    await this.check('cancel_terminal', this.checkCancelTerminal);
    await this.check('input_required', this.checkInputRequired);
    await this.check('resubscribe', this.checkResubscribe);
    await this.check('subscribe_terminal', this.checkSubscribeTerminal);
    await this.check('push_config_crud', this.checkPushConfigCrud);
    await this.check('ext_header_echo', this.checkExtHeaderEcho);
    if (this.skipped) console.log(`${this.skipped} skipped`);
    console.log(`${this.passed} passed, ${this.failed} failed`);
    return this.failed ? 1 : 0;
  }
}

const args = parseArgs(process.argv.slice(2));
const code = await new Runner(args).run();
process.exit(code);
