"""The official A2A Python SDK v0.3 client against an a2a-runtime server (protocol v0.3).

Usage: client_check.py BASE_URL [--binding jsonrpc|rest] [--task-from-v1 TASK_ID] [--timeout S]

`--binding rest` talks HTTP+JSON (`/v1/...` below the card's HTTP+JSON interface), chosen the
way the SDK's client factory chooses it; the SDK has no REST list/delete of push configs, so
those two are plain HTTP calls.

Prints one line per check (`PASS name` / `FAIL name: reason`) and `N passed, M failed`; a task
the v1.0 side is to read is printed as `TASK <id>`.
"""

import argparse
import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientHTTPError, A2AClientJSONRPCError
from a2a.client.transports.jsonrpc import JsonRpcTransport
from a2a.client.transports.rest import RestTransport
from a2a.types import (
    DeleteTaskPushNotificationConfigParams,
    DeleteTaskPushNotificationConfigRequest,
    DeleteTaskPushNotificationConfigResponse,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigResponse,
    Message,
    MessageSendConfiguration,
    MessageSendParams,
    Part,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskIdParams,
    TaskPushNotificationConfig,
    TaskQueryParams,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)

TIMESTAMP = 'https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1'


def user(text, task_id=None, message_id=None):
    return Message(
        role=Role.user,
        parts=[Part(root=TextPart(text=text))],
        message_id=message_id or str(uuid.uuid4()),
        task_id=task_id,
    )


def texts(parts):
    return [p.root.text for p in parts if hasattr(p.root, 'text')]


class Checks:
    def __init__(self, args):
        self.args = args
        self.passed = 0
        self.failed = 0
        self.responses = []

    async def hook(self, response):
        self.responses.append(response)

    async def run(self, name, coro):
        try:
            await asyncio.wait_for(coro, self.args.timeout)
            self.passed += 1
            print(f'PASS {name}', flush=True)
        except Exception as e:  # noqa: BLE001 - every failure is reported
            self.failed += 1
            print(f'FAIL {name}: {type(e).__name__}: {e}', flush=True)

    async def main(self):
        async with httpx.AsyncClient(
            timeout=self.args.timeout, event_hooks={'response': [self.hook]}
        ) as http:
            self.http = http
            card = await A2ACardResolver(http, self.args.url).get_agent_card()
            self.card = card
            self.rest = self.args.binding == 'rest'
            if self.rest:
                # The interface the SDK's factory picks for a client that speaks only REST.
                config = ClientConfig(httpx_client=http, supported_transports=['HTTP+JSON'])
                picked = ClientFactory(config).create(card)._transport
                assert isinstance(picked, RestTransport), type(picked)
                self.rest_url = picked.url
                self.t = RestTransport(http, agent_card=card, url=self.rest_url)
                self.ext = RestTransport(http, agent_card=card, url=self.rest_url, extensions=[TIMESTAMP])
            else:
                self.t = JsonRpcTransport(http, agent_card=card)
                self.ext = JsonRpcTransport(http, agent_card=card, extensions=[TIMESTAMP])
            await self.run('card', self.check_card())
            await self.run('send_blocking', self.check_send())
            await self.run('stream', self.check_stream())
            await self.run('get_task', self.check_get())
            await self.run('get_task_not_found', self.check_not_found())
            await self.run('cancel', self.check_cancel())
            await self.run('resubscribe', self.check_resubscribe())
            await self.run('input_required', self.check_input_required())
            await self.run('duplicate_message_id', self.check_duplicate())
            await self.run('push_config_crud', self.check_push())
            await self.run('extensions', self.check_extensions())
            await self.run('extensions_stream', self.check_extensions_stream())
            await self.run('task_for_v1', self.check_task_for_v1())
            if self.args.task_from_v1:
                await self.run('read_v1_task', self.check_read_v1_task())
        print(f'{self.passed} passed, {self.failed} failed', flush=True)
        return self.failed == 0

    async def check_card(self):
        c = self.card
        assert c.protocol_version == '0.3.0', c.protocol_version
        assert c.url.rstrip('/') == self.args.url.rstrip('/'), c.url
        assert c.preferred_transport == 'JSONRPC', c.preferred_transport
        transports = {i.transport: i.url for i in c.additional_interfaces or []}
        assert 'JSONRPC' in transports, c.additional_interfaces
        assert transports.get('HTTP+JSON', '').rstrip('/') == self.args.url.rstrip('/'), c.additional_interfaces
        if self.rest:
            assert self.rest_url.rstrip('/') == self.args.url.rstrip('/'), self.rest_url
        assert c.capabilities.streaming, c.capabilities
        assert any(e.uri == TIMESTAMP for e in c.capabilities.extensions or []), c.capabilities

    async def send(self, text, blocking=True, **kw):
        config = MessageSendConfiguration(blocking=blocking, accepted_output_modes=['text/plain'])
        return await self.t.send_message(
            MessageSendParams(message=user(text, **kw), configuration=config)
        )

    async def check_send(self):
        task = await self.send('hello')
        assert isinstance(task, Task), task
        assert task.status.state == TaskState.completed, task.status
        got = [t for a in task.artifacts or [] for t in texts(a.parts)]
        assert any('hello' in t for t in got), got
        self.done = task

    async def check_stream(self):
        events = []
        async for ev in self.t.send_message_streaming(MessageSendParams(message=user('stream'))):
            events.append(ev)
        assert isinstance(events[0], Task), events[0]
        chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
        assert [texts(c.artifact.parts) for c in chunks] == [['chunk 1'], ['chunk 2'], ['chunk 3']], chunks
        assert chunks[-1].last_chunk, chunks[-1]
        last = events[-1]
        assert isinstance(last, TaskStatusUpdateEvent), last
        assert last.status.state == TaskState.completed and last.final, last
        working = [e for e in events if isinstance(e, TaskStatusUpdateEvent) and not e.final]
        assert working and working[0].status.state == TaskState.working, events

    async def check_get(self):
        task = await self.t.get_task(TaskQueryParams(id=self.done.id, history_length=1))
        assert task.id == self.done.id and task.status.state == TaskState.completed, task
        assert len(task.history or []) == 1, task.history
        assert task.history[0].role in (Role.user, Role.agent), task.history

    async def check_not_found(self):
        try:
            await self.t.get_task(TaskQueryParams(id='no-such-task'))
        except A2AClientJSONRPCError as e:
            assert e.error.code == -32001, e.error
            return
        except A2AClientHTTPError as e:
            assert self.rest and e.status_code == 404, e
            return
        raise AssertionError('no error')

    async def check_cancel(self):
        task = await self.send('wait', blocking=False)
        assert task.status.state in (TaskState.submitted, TaskState.working), task.status
        canceled = await self.t.cancel_task(TaskIdParams(id=task.id))
        assert canceled.status.state == TaskState.canceled, canceled.status
        again = await self.t.get_task(TaskQueryParams(id=task.id))
        assert again.status.state == TaskState.canceled, again.status

    async def check_resubscribe(self):
        task = await self.send('wait', blocking=False)
        events = []
        stream = self.t.resubscribe(TaskIdParams(id=task.id))
        first = await stream.__anext__()
        assert isinstance(first, Task) and first.id == task.id, first
        await self.t.cancel_task(TaskIdParams(id=task.id))
        async for ev in stream:
            events.append(ev)
        last = events[-1]
        assert isinstance(last, TaskStatusUpdateEvent), events
        assert last.status.state == TaskState.canceled and last.final, last

    async def check_input_required(self):
        task = await self.send('ask')
        assert task.status.state == TaskState.input_required, task.status
        self.asked = task
        done = await self.send('Ada', task_id=task.id)
        assert done.status.state == TaskState.completed, done.status

    async def check_duplicate(self):
        mid = str(uuid.uuid4())
        task = await self.send('ask', message_id=mid)
        assert task.status.state == TaskState.input_required, task.status
        try:
            await self.send('again', task_id=task.id, message_id=mid)
        except A2AClientJSONRPCError as e:
            assert e.error.code == -32602, e.error
        except A2AClientHTTPError as e:
            assert self.rest and e.status_code in (400, 422), e
        else:
            raise AssertionError('a repeated messageId was accepted')
        still = await self.t.get_task(TaskQueryParams(id=task.id))
        assert still.status.state == TaskState.input_required, still.status
        await self.t.cancel_task(TaskIdParams(id=task.id))

    async def rpc(self, request, response_type):
        r = await self.http.post(self.card.url, json=request.model_dump(mode='json', exclude_none=True))
        parsed = response_type.model_validate(r.json())
        if hasattr(parsed.root, 'error'):
            raise AssertionError(f'error: {parsed.root.error}')
        return parsed.root.result

    async def check_push(self):
        tid = self.done.id
        url = 'https://push.example.com/hook'
        made = await self.t.set_task_callback(
            TaskPushNotificationConfig(
                task_id=tid,
                push_notification_config=PushNotificationConfig(id='p1', url=url, token='tok'),
            )
        )
        assert made.task_id == tid and made.push_notification_config.id == 'p1', made
        got = await self.t.get_task_callback(
            GetTaskPushNotificationConfigParams(id=tid, push_notification_config_id='p1')
        )
        assert got.push_notification_config.url == url, got
        assert got.push_notification_config.token == 'tok', got
        if self.rest:
            await self.check_push_rest(tid)
            return
        listed = await self.rpc(
            ListTaskPushNotificationConfigRequest(
                id=1, params=ListTaskPushNotificationConfigParams(id=tid)
            ),
            ListTaskPushNotificationConfigResponse,
        )
        assert [c.push_notification_config.id for c in listed] == ['p1'], listed
        deleted = await self.rpc(
            DeleteTaskPushNotificationConfigRequest(
                id=2,
                params=DeleteTaskPushNotificationConfigParams(id=tid, push_notification_config_id='p1'),
            ),
            DeleteTaskPushNotificationConfigResponse,
        )
        assert deleted is None, deleted
        listed = await self.rpc(
            ListTaskPushNotificationConfigRequest(
                id=3, params=ListTaskPushNotificationConfigParams(id=tid)
            ),
            ListTaskPushNotificationConfigResponse,
        )
        assert listed == [], listed

    async def check_push_rest(self, tid):
        configs = f'{self.rest_url}/v1/tasks/{tid}/pushNotificationConfigs'
        r = await self.http.get(configs)
        assert r.status_code == 200, r.text
        listed = r.json()['configs']
        assert [c['pushNotificationConfig']['id'] for c in listed] == ['p1'], listed
        assert listed[0]['name'] == f'tasks/{tid}/pushNotificationConfigs/p1', listed
        r = await self.http.delete(f'{configs}/p1')
        assert r.status_code in (200, 204), r.text
        r = await self.http.get(configs)
        assert r.json().get('configs', []) == [], r.text
        r = await self.http.get(f'{configs}/p1')
        assert r.status_code == 404, r.text

    def echoed(self, response):
        values = response.headers.get_list('x-a2a-extensions') + response.headers.get_list('a2a-extensions')
        return {u.strip() for v in values for u in v.split(',') if u.strip()}

    async def check_extensions(self):
        mark = len(self.responses)
        blocking = MessageSendConfiguration(blocking=True)
        task = await self.ext.send_message(MessageSendParams(message=user('hello'), configuration=blocking))
        assert isinstance(task, Task), task
        response = self.responses[mark]
        assert TIMESTAMP in self.echoed(response), dict(response.headers)
        assert TIMESTAMP in (response.headers.get('x-a2a-extensions') or ''), dict(response.headers)
        blob = json.dumps(task.model_dump(mode='json'))
        assert 'timestamp' in blob, blob
        mark = len(self.responses)
        await self.t.send_message(MessageSendParams(message=user('hello')))
        assert TIMESTAMP not in self.echoed(self.responses[mark]), dict(self.responses[mark].headers)

    async def check_extensions_stream(self):
        mark = len(self.responses)
        events = [e async for e in self.ext.send_message_streaming(MessageSendParams(message=user('stream')))]
        assert events, events
        assert TIMESTAMP in self.echoed(self.responses[mark]), dict(self.responses[mark].headers)

    async def check_task_for_v1(self):
        task = await self.send('wait', blocking=False)
        print(f'TASK {task.id}', flush=True)

    async def check_read_v1_task(self):
        tid = self.args.task_from_v1
        task = await self.t.get_task(TaskQueryParams(id=tid))
        assert task.id == tid, task
        assert task.status.state in (TaskState.submitted, TaskState.working), task.status
        assert task.history and task.history[0].role == Role.user, task.history
        stream = self.t.resubscribe(TaskIdParams(id=tid))
        first = await stream.__anext__()
        assert isinstance(first, Task) and first.id == tid, first
        canceled = await self.t.cancel_task(TaskIdParams(id=tid))
        assert canceled.status.state == TaskState.canceled, canceled.status
        events = [e async for e in stream]
        assert events and events[-1].status.state == TaskState.canceled and events[-1].final, events


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('url')
    parser.add_argument('--binding', choices=['jsonrpc', 'rest'], default='jsonrpc')
    parser.add_argument('--task-from-v1', default=None)
    parser.add_argument('--timeout', type=float, default=20)
    args = parser.parse_args()
    ok = asyncio.run(Checks(args).main())
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
