#!/usr/bin/env python3
"""Drive an A2A v1.0 server with the official Python SDK client (a2a-sdk 1.x).

Usage::

    python client_check.py URL [--binding jsonrpc|rest|grpc] [--timeout SECONDS]
                               [--ext-uri URI] [--only NAME[,NAME...]] [-v]

URL is the agent's base URL; the card is fetched from
``URL/.well-known/agent-card.json`` and the client then talks to the
``supportedInterfaces`` entry of the chosen binding (JSON-RPC by default).

The server must run an echo agent with these conventions (user text):
``stream`` -> WORKING, 3 appended artifact chunks, COMPLETED;
``wait`` -> WORKING until canceled; ``ask`` -> INPUT_REQUIRED;
anything else ``T`` -> an artifact ``echo: T`` and COMPLETED.

Every check prints ``PASS name``, ``FAIL name: reason`` or
``SKIP name: reason``. The last line is ``N passed, M failed``; the exit
status is 1 when any check failed, 2 when the card could not be fetched.

Everything goes through the SDK ``Client`` (``ClientFactory``/``BaseClient``);
raw HTTP is only *observed* through an httpx response event hook, which is
how the ``A2A-Extensions`` response header is read (the SDK does not expose
response headers). Over gRPC the same is observed with a client interceptor on
the SDK's channel (request metadata and the response's initial metadata).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
import traceback
import uuid

from collections.abc import Awaitable, Callable
from datetime import datetime

import grpc
import httpx

from a2a.client import A2ACardResolver, ClientCallContext, ClientConfig
from a2a.client.client_factory import ClientFactory
from a2a.client.service_parameters import (
    ServiceParametersFactory,
    with_a2a_extensions,
)
from a2a.helpers import get_artifact_text
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import (
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)


DEFAULT_EXT_URI = 'https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1'
TERMINAL = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
}
BINDINGS = {'jsonrpc': 'JSONRPC', 'rest': 'HTTP+JSON', 'grpc': 'GRPC'}


class Skip(Exception):
    """Raised by a check that does not apply to this server."""


class CheckFailed(Exception):
    """Raised by a check whose expectation was not met."""


def expect(cond: bool, reason: str) -> None:
    if not cond:
        raise CheckFailed(reason)


def state_name(state: int) -> str:
    return TaskState.Name(state)


def ts_key(uri: str) -> str:
    return uri.split('://', 1)[-1] + '/timestamp'


def user_message(
    text: str, task_id: str = '', context_id: str = ''
) -> Message:
    return Message(
        message_id=str(uuid.uuid4()),
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )


def event_kind(ev: StreamResponse) -> str:
    return ev.WhichOneof('payload') or '<empty>'


def event_state(ev: StreamResponse) -> int | None:
    kind = event_kind(ev)
    if kind == 'task':
        return ev.task.status.state
    if kind == 'status_update':
        return ev.status_update.status.state
    return None


def event_task_id(ev: StreamResponse) -> str:
    kind = event_kind(ev)
    if kind == 'task':
        return ev.task.id
    if kind == 'status_update':
        return ev.status_update.task_id
    if kind == 'artifact_update':
        return ev.artifact_update.task_id
    return ev.message.task_id


def describe(events: list[StreamResponse]) -> str:
    out = []
    for ev in events:
        st = event_state(ev)
        out.append(
            event_kind(ev) + (f'({state_name(st)})' if st is not None else '')
        )
    return ' -> '.join(out)


class Recorder:
    """httpx event hook that remembers every request/response head."""

    def __init__(self) -> None:
        self.exchanges: list[tuple[httpx.Request, httpx.Response]] = []

    async def __call__(self, response: httpx.Response) -> None:
        self.exchanges.append((response.request, response))

    def mark(self) -> int:
        return len(self.exchanges)

    def since(self, mark: int) -> list[tuple[httpx.Request, httpx.Response]]:
        return self.exchanges[mark:]


class GrpcRecorder:
    """Remembers every gRPC call's sent and received (initial) metadata.

    ``exchanges`` holds (sent, received) pairs of ``{key: value}`` dicts, read
    the way ``Runner`` reads the httpx ``Recorder``. ``interceptors()`` gives
    one interceptor per call kind (grpc.aio files a multi-kind interceptor
    under its first kind only).
    """

    def __init__(self) -> None:
        self.exchanges: list[tuple[dict, dict]] = []

    def mark(self) -> int:
        return len(self.exchanges)

    def since(self, mark: int) -> list[tuple[dict, dict]]:
        return self.exchanges[mark:]

    async def record(self, details, call) -> None:
        sent: dict[str, str] = {}
        for k, v in details.metadata or ():
            sent[k] = f'{sent[k]},{v}' if k in sent else v
        received: dict[str, str] = {}
        for k, v in await call.initial_metadata() or ():
            received[k] = f'{received[k]},{v}' if k in received else v
        self.exchanges.append((sent, received))

    def interceptors(self) -> list:
        recorder = self

        class Unary(grpc.aio.UnaryUnaryClientInterceptor):
            async def intercept_unary_unary(self, continuation, details, request):
                call = await continuation(details, request)
                await recorder.record(details, call)
                return call

        class Stream(grpc.aio.UnaryStreamClientInterceptor):
            async def intercept_unary_stream(self, continuation, details, request):
                call = await continuation(details, request)
                await recorder.record(details, call)
                return call

        return [Unary(), Stream()]


class Runner:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.url = args.url
        self.binding = BINDINGS[args.binding]
        self.ext_uri = args.ext_uri
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.recorder = Recorder()
        # A bearer token, when the agent requires one: sent on every request.
        auth = {'Authorization': f'Bearer {args.token}'} if args.token else {}
        self.grpc_recorder = GrpcRecorder()
        self.http = httpx.AsyncClient(
            timeout=httpx.Timeout(args.timeout),
            headers=auth,
            event_hooks={'response': [self.recorder]},
        )
        self.card: AgentCard | None = None
        self.blocking = None  # Client with streaming disabled
        self.streaming = None  # Client with streaming enabled
        self.echo_task: Task | None = None
        self.only = set(args.only.split(',')) if args.only else None

    # -- reporting ---------------------------------------------------------

    def report(self, status: str, name: str, reason: str = '') -> None:
        if status == 'PASS':
            self.passed += 1
            print(f'PASS {name}' + (f' ({reason})' if reason and self.args.verbose else ''))
        elif status == 'SKIP':
            self.skipped += 1
            print(f'SKIP {name}: {reason}')
        else:
            self.failed += 1
            print(f'FAIL {name}: {reason}')
        sys.stdout.flush()

    async def check(
        self, name: str, fn: Callable[[], Awaitable[str | None]]
    ) -> None:
        if self.only is not None and name not in self.only:
            return
        try:
            note = await asyncio.wait_for(fn(), timeout=self.args.timeout)
            self.report('PASS', name, note or '')
        except Skip as e:
            self.report('SKIP', name, str(e))
        except CheckFailed as e:
            self.report('FAIL', name, str(e))
        except asyncio.TimeoutError:
            self.report('FAIL', name, f'timed out after {self.args.timeout}s')
        except Exception as e:  # noqa: BLE001
            if self.args.verbose:
                traceback.print_exc()
            self.report('FAIL', name, f'{type(e).__name__}: {e}')

    # -- helpers -----------------------------------------------------------

    async def send_blocking(
        self,
        text: str,
        *,
        return_immediately: bool = False,
        task_id: str = '',
        context_id: str = '',
        context: ClientCallContext | None = None,
    ) -> StreamResponse:
        request = SendMessageRequest(
            message=user_message(text, task_id, context_id),
            configuration=SendMessageConfiguration(
                return_immediately=return_immediately
            ),
        )
        events = [
            ev async for ev in self.blocking.send_message(request, context=context)
        ]
        expect(len(events) == 1, f'expected 1 result, got {len(events)}')
        return events[0]

    async def send_task(self, text: str, **kw) -> Task:
        ev = await self.send_blocking(text, **kw)
        expect(
            event_kind(ev) == 'task',
            f'expected a Task result, got {event_kind(ev)}',
        )
        return ev.task

    async def send_stream(
        self, text: str, context: ClientCallContext | None = None
    ) -> list[StreamResponse]:
        request = SendMessageRequest(message=user_message(text))
        return [
            ev
            async for ev in self.streaming.send_message(request, context=context)
        ]

    async def start_wait_task(self) -> Task:
        task = await self.send_task('wait', return_immediately=True)
        expect(
            task.status.state not in TERMINAL,
            f'"wait" task is already terminal: {state_name(task.status.state)}',
        )
        return task

    async def cancel_quietly(self, task_id: str) -> None:
        try:
            await self.blocking.cancel_task(CancelTaskRequest(id=task_id))
        except Exception:  # noqa: BLE001
            pass

    def need_streaming(self) -> None:
        if not self.card.capabilities.streaming:
            raise Skip('card does not declare capabilities.streaming')

    def need_push(self) -> None:
        if not self.card.capabilities.push_notifications:
            raise Skip('card does not declare capabilities.pushNotifications')

    def ext_declared(self) -> bool:
        return any(
            e.uri == self.ext_uri for e in self.card.capabilities.extensions
        )

    def ext_context(self) -> ClientCallContext:
        return ClientCallContext(
            service_parameters=ServiceParametersFactory.create(
                [with_a2a_extensions([self.ext_uri])]
            )
        )

    def sent_extensions(self, mark: int) -> list[str]:
        """A2A-Extensions request values of exchanges since mark."""
        if self.binding == 'GRPC':
            return [
                sent.get('a2a-extensions', '')
                for sent, _ in self.grpc_recorder.since(mark)
            ]
        return [
            req.headers.get('a2a-extensions', '')
            for req, _ in self.recorder.since(mark)
        ]

    def mark(self) -> int:
        if self.binding == 'GRPC':
            return self.grpc_recorder.mark()
        return self.recorder.mark()

    def echoed_extensions(self, mark: int) -> list[str]:
        """A2A-Extensions response header values of exchanges since mark."""
        if self.binding == 'GRPC':
            return [
                received.get('a2a-extensions', '')
                for _, received in self.grpc_recorder.since(mark)
            ]
        values = []
        for req, resp in self.recorder.since(mark):
            if req.url.path.endswith('agent-card.json'):
                continue
            values.append(resp.headers.get('a2a-extensions', ''))
        return values

    # -- checks ------------------------------------------------------------

    async def check_card(self) -> str:
        # Factories first: ClientFactory sets the default `A2A-Version: 1.0`
        # header on the shared httpx client, so the card request carries it
        # exactly as with ClientFactory.create_from_url().
        factories = {
            streaming: ClientFactory(
                ClientConfig(
                    streaming=streaming,
                    httpx_client=self.http,
                    supported_protocol_bindings=[self.binding],
                    grpc_channel_factory=lambda url: grpc.aio.insecure_channel(
                        url, interceptors=self.grpc_recorder.interceptors()
                    ),
                )
            )
            for streaming in (False, True)
        }
        resolver = A2ACardResolver(self.http, self.url)
        self.card = await resolver.get_agent_card()
        card = self.card
        expect(bool(card.name), 'card has no name')
        ifaces = [
            (i.protocol_binding, i.protocol_version, i.url)
            for i in card.supported_interfaces
        ]
        expect(bool(ifaces), 'card has no supportedInterfaces')
        match = [i for i in ifaces if i[0] == self.binding]
        expect(
            bool(match),
            f'no {self.binding} interface in supportedInterfaces {ifaces}',
        )
        expect(
            any(v.split('.')[:2] == ['1', '0'] for _, v, _ in match),
            f'no {self.binding} interface with protocolVersion 1.0: {match}',
        )
        self.blocking = factories[False].create(card)
        self.streaming = factories[True].create(card)
        return f'{card.name!r} via {match[0][2]}'

    async def check_send_blocking(self) -> str:
        task = await self.send_task('hello')
        expect(
            task.status.state == TaskState.TASK_STATE_COMPLETED,
            f'state {state_name(task.status.state)}, want COMPLETED',
        )
        texts = [get_artifact_text(a) for a in task.artifacts]
        expect('echo: hello' in texts, f'artifact texts {texts!r}')
        expect(bool(task.id) and bool(task.context_id), 'missing id/contextId')
        self.echo_task = task
        return task.id

    async def check_stream(self) -> str:
        self.need_streaming()
        events = await self.send_stream('stream')
        expect(bool(events), 'no events')
        expect(
            event_kind(events[0]) == 'task',
            f'first event is {event_kind(events[0])}, want task ({describe(events)})',
        )
        task_id = events[0].task.id
        for ev in events[1:]:
            expect(
                event_kind(ev) in ('status_update', 'artifact_update', 'task'),
                f'unexpected event {event_kind(ev)} ({describe(events)})',
            )
            expect(
                event_task_id(ev) == task_id,
                f'event for task {event_task_id(ev)}, want {task_id}',
            )
        last_state = next(
            (event_state(e) for e in reversed(events) if event_state(e) is not None),
            None,
        )
        expect(
            last_state == TaskState.TASK_STATE_COMPLETED,
            f'stream does not end COMPLETED ({describe(events)})',
        )
        expect(
            event_state(events[-1]) == TaskState.TASK_STATE_COMPLETED,
            f'last event is not the COMPLETED state ({describe(events)})',
        )
        saw_working = any(
            event_state(e) == TaskState.TASK_STATE_WORKING for e in events
        )
        expect(saw_working, f'no WORKING state in stream ({describe(events)})')
        chunks = [
            e.artifact_update for e in events if event_kind(e) == 'artifact_update'
        ]
        expect(len(chunks) == 3, f'{len(chunks)} artifact updates, want 3')
        ids = {c.artifact.artifact_id for c in chunks}
        expect(len(ids) == 1, f'chunks use different artifactIds {ids}')
        expect(
            [c.append for c in chunks[1:]] == [True, True],
            f'append flags {[c.append for c in chunks]}, want [False, True, True]',
        )
        first_artifact = next(
            i for i, e in enumerate(events) if event_kind(e) == 'artifact_update'
        )
        completed_at = max(
            i
            for i, e in enumerate(events)
            if event_state(e) == TaskState.TASK_STATE_COMPLETED
        )
        expect(
            first_artifact < completed_at, 'artifact update after COMPLETED'
        )
        note = describe(events)
        if not chunks[-1].last_chunk:
            note += ' [note: last chunk lacks lastChunk=true]'
        return note

    async def check_stream_echo(self) -> str:
        self.need_streaming()
        events = await self.send_stream('hello stream')
        expect(bool(events), 'no events')
        expect(
            event_kind(events[0]) == 'task',
            f'first event is {event_kind(events[0])}, want task',
        )
        texts = [
            get_artifact_text(e.artifact_update.artifact)
            for e in events
            if event_kind(e) == 'artifact_update'
        ]
        expect(
            'echo: hello stream' in texts, f'artifact texts {texts!r}'
        )
        expect(
            event_state(events[-1]) == TaskState.TASK_STATE_COMPLETED,
            f'does not end COMPLETED ({describe(events)})',
        )
        return describe(events)

    async def check_get_task(self) -> str:
        if self.echo_task is None:
            raise Skip('send_blocking did not produce a task')
        task = await self.blocking.get_task(GetTaskRequest(id=self.echo_task.id))
        expect(task.id == self.echo_task.id, f'got task {task.id}')
        expect(
            task.status.state == TaskState.TASK_STATE_COMPLETED,
            f'state {state_name(task.status.state)}',
        )
        texts = [get_artifact_text(a) for a in task.artifacts]
        expect('echo: hello' in texts, f'artifact texts {texts!r}')
        return f'history={len(task.history)}'

    async def check_get_task_history_length(self) -> str:
        if self.echo_task is None:
            raise Skip('send_blocking did not produce a task')
        task = await self.blocking.get_task(
            GetTaskRequest(id=self.echo_task.id, history_length=0)
        )
        expect(
            len(task.history) == 0,
            f'historyLength=0 returned {len(task.history)} messages',
        )
        task = await self.blocking.get_task(
            GetTaskRequest(id=self.echo_task.id, history_length=1)
        )
        expect(
            len(task.history) <= 1,
            f'historyLength=1 returned {len(task.history)} messages',
        )
        return 'ok'

    async def check_get_task_not_found(self) -> str:
        try:
            await self.blocking.get_task(
                GetTaskRequest(id=f'no-such-task-{uuid.uuid4()}')
            )
        except TaskNotFoundError:
            return 'TaskNotFoundError'
        raise CheckFailed('GetTask of an unknown id succeeded')

    async def check_list_tasks(self) -> str:
        if self.echo_task is None:
            raise Skip('send_blocking did not produce a task')
        resp = await self.blocking.list_tasks(
            ListTasksRequest(context_id=self.echo_task.context_id)
        )
        ids = [t.id for t in resp.tasks]
        expect(self.echo_task.id in ids, f'task not listed; got {ids}')
        for t in resp.tasks:
            expect(
                len(t.artifacts) == 0,
                'artifacts returned although includeArtifacts was not set',
            )
        resp2 = await self.blocking.list_tasks(
            ListTasksRequest(
                context_id=self.echo_task.context_id, include_artifacts=True
            )
        )
        mine = [t for t in resp2.tasks if t.id == self.echo_task.id]
        expect(bool(mine), 'task not listed with includeArtifacts')
        texts = [get_artifact_text(a) for a in mine[0].artifacts]
        expect(
            'echo: hello' in texts,
            f'includeArtifacts=true artifact texts {texts!r}',
        )
        all_resp = await self.blocking.list_tasks(ListTasksRequest(page_size=1))
        expect(len(all_resp.tasks) <= 1, 'pageSize=1 returned more than 1 task')
        return (
            f'{len(resp.tasks)} in context, totalSize={all_resp.total_size}, '
            f'pageSize={all_resp.page_size}'
        )

    async def check_return_immediately_and_cancel(self) -> str:
        task = await self.start_wait_task()
        first_state = state_name(task.status.state)
        canceled = await self.blocking.cancel_task(CancelTaskRequest(id=task.id))
        expect(canceled.id == task.id, f'cancel returned task {canceled.id}')
        expect(
            canceled.status.state == TaskState.TASK_STATE_CANCELED,
            f'cancel returned state {state_name(canceled.status.state)}',
        )
        again = await self.blocking.get_task(GetTaskRequest(id=task.id))
        expect(
            again.status.state == TaskState.TASK_STATE_CANCELED,
            f'GetTask after cancel: {state_name(again.status.state)}',
        )
        return f'returnImmediately gave {first_state}'

    async def check_cancel_terminal(self) -> str:
        if self.echo_task is None:
            raise Skip('send_blocking did not produce a task')
        try:
            await self.blocking.cancel_task(CancelTaskRequest(id=self.echo_task.id))
        except TaskNotCancelableError:
            return 'TaskNotCancelableError'
        raise CheckFailed('CancelTask of a COMPLETED task succeeded')

    async def check_input_required(self) -> str:
        task = await self.send_task('ask')
        expect(
            task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED,
            f'state {state_name(task.status.state)}, want INPUT_REQUIRED',
        )
        follow = await self.send_task(
            'more', task_id=task.id, context_id=task.context_id
        )
        expect(follow.id == task.id, f'follow-up created task {follow.id}')
        expect(
            follow.status.state == TaskState.TASK_STATE_COMPLETED,
            f'follow-up state {state_name(follow.status.state)}',
        )
        texts = [get_artifact_text(a) for a in follow.artifacts]
        expect('echo: more' in texts, f'follow-up artifact texts {texts!r}')
        return 'INPUT_REQUIRED -> COMPLETED'

    async def check_resubscribe(self) -> str:
        self.need_streaming()
        task = await self.start_wait_task()
        events: list[StreamResponse] = []
        first = asyncio.Event()

        async def consume() -> None:
            async for ev in self.streaming.subscribe(
                SubscribeToTaskRequest(id=task.id)
            ):
                events.append(ev)
                first.set()

        consumer = asyncio.create_task(consume())
        try:
            done, _ = await asyncio.wait(
                {consumer, asyncio.create_task(first.wait())},
                timeout=self.args.timeout / 2,
                return_when=asyncio.FIRST_COMPLETED,
            )
            if consumer in done:
                consumer.result()  # re-raise an error from the stream
            expect(bool(events), 'no event received after subscribing')
            expect(
                event_kind(events[0]) == 'task',
                f'first event is {event_kind(events[0])}, want task',
            )
            expect(
                events[0].task.id == task.id,
                f'first event is task {events[0].task.id}',
            )
            expect(
                events[0].task.status.state not in TERMINAL,
                f'snapshot state {state_name(events[0].task.status.state)}',
            )
            canceled = await self.blocking.cancel_task(
                CancelTaskRequest(id=task.id)
            )
            expect(
                canceled.status.state == TaskState.TASK_STATE_CANCELED,
                f'cancel returned {state_name(canceled.status.state)}',
            )
            await asyncio.wait_for(consumer, timeout=self.args.timeout / 2)
        except asyncio.TimeoutError as e:
            raise CheckFailed(
                f'stream did not end after cancel ({describe(events)})'
            ) from e
        finally:
            if not consumer.done():
                consumer.cancel()
            await self.cancel_quietly(task.id)
        expect(
            event_state(events[-1]) == TaskState.TASK_STATE_CANCELED,
            f'stream does not end CANCELED ({describe(events)})',
        )
        return describe(events)

    async def check_subscribe_terminal(self) -> str:
        self.need_streaming()
        if self.echo_task is None:
            raise Skip('send_blocking did not produce a task')
        try:
            async for _ in self.streaming.subscribe(
                SubscribeToTaskRequest(id=self.echo_task.id)
            ):
                raise CheckFailed('SubscribeToTask of a COMPLETED task yielded events')
        except UnsupportedOperationError:
            return 'UnsupportedOperationError'
        raise CheckFailed('SubscribeToTask of a COMPLETED task did not fail')

    async def check_push_config_crud(self) -> str:
        self.need_push()
        task = await self.start_wait_task()
        try:
            cfg_id = f'cfg-{uuid.uuid4().hex[:8]}'
            created = await self.blocking.create_task_push_notification_config(
                TaskPushNotificationConfig(
                    task_id=task.id,
                    id=cfg_id,
                    url='https://example.com/hook',
                    token='interop-token',
                )
            )
            expect(created.id == cfg_id, f'create returned id {created.id!r}')
            expect(
                created.url == 'https://example.com/hook',
                f'create returned url {created.url!r}',
            )
            expect(
                created.task_id in ('', task.id),
                f'create returned taskId {created.task_id!r}',
            )
            auto = await self.blocking.create_task_push_notification_config(
                TaskPushNotificationConfig(
                    task_id=task.id, url='https://example.com/hook2'
                )
            )
            expect(bool(auto.id), 'server did not assign an id to a config without one')
            got = await self.blocking.get_task_push_notification_config(
                GetTaskPushNotificationConfigRequest(task_id=task.id, id=cfg_id)
            )
            expect(got.id == cfg_id, f'get returned id {got.id!r}')
            expect(
                got.url == 'https://example.com/hook', f'get returned url {got.url!r}'
            )
            listed = await self.blocking.list_task_push_notification_configs(
                ListTaskPushNotificationConfigsRequest(task_id=task.id)
            )
            ids = {c.id for c in listed.configs}
            expect(
                {cfg_id, auto.id} <= ids, f'list returned ids {sorted(ids)}'
            )
            for cid in (cfg_id, auto.id):
                await self.blocking.delete_task_push_notification_config(
                    DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=cid)
                )
            # Delete is idempotent (spec §3.1.10).
            await self.blocking.delete_task_push_notification_config(
                DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=cfg_id)
            )
            listed = await self.blocking.list_task_push_notification_configs(
                ListTaskPushNotificationConfigsRequest(task_id=task.id)
            )
            left = {c.id for c in listed.configs} & {cfg_id, auto.id}
            expect(not left, f'configs still listed after delete: {left}')
            try:
                await self.blocking.get_task_push_notification_config(
                    GetTaskPushNotificationConfigRequest(task_id=task.id, id=cfg_id)
                )
            except TaskNotFoundError:
                pass
            else:
                raise CheckFailed('get of a deleted config succeeded')
            return f'server-assigned id {auto.id!r}'
        finally:
            await self.cancel_quietly(task.id)

    async def check_ext_header_echo(self) -> str:
        if not self.ext_declared():
            raise Skip(f'card does not declare extension {self.ext_uri}')
        mark = self.mark()
        await self.send_task('hello', context=self.ext_context())
        sent = self.sent_extensions(mark)
        expect(
            any(self.ext_uri in s for s in sent),
            f'the SDK did not send A2A-Extensions (sent {sent})',
        )
        echoed = self.echoed_extensions(mark)
        expect(
            any(self.ext_uri in [v.strip() for v in e.split(',')] for e in echoed),
            f'response A2A-Extensions header was {echoed!r}',
        )
        return f'A2A-Extensions: {echoed[-1]}'

    async def check_ext_header_echo_stream(self) -> str:
        self.need_streaming()
        if not self.ext_declared():
            raise Skip(f'card does not declare extension {self.ext_uri}')
        mark = self.mark()
        await self.send_stream('hello', context=self.ext_context())
        echoed = self.echoed_extensions(mark)
        expect(
            any(self.ext_uri in [v.strip() for v in e.split(',')] for e in echoed),
            f'streaming response A2A-Extensions header was {echoed!r}',
        )
        return f'A2A-Extensions: {echoed[-1]}'

    async def check_ext_timestamp_metadata(self) -> str:
        if not self.ext_declared():
            raise Skip(f'card does not declare extension {self.ext_uri}')
        task = await self.send_task('hello', context=self.ext_context())
        key = ts_key(self.ext_uri)
        found: list[tuple[str, str]] = []
        for a in task.artifacts:
            if key in a.metadata:
                found.append((f'artifact {a.artifact_id}', a.metadata[key]))
        for m in task.history:
            if m.role == Role.ROLE_AGENT and key in m.metadata:
                found.append((f'message {m.message_id}', m.metadata[key]))
        if task.status.HasField('message') and key in task.status.message.metadata:
            found.append(('status message', task.status.message.metadata[key]))
        if not found:
            raise Skip(f'no {key} metadata on agent messages/artifacts')
        for where, value in found:
            expect(isinstance(value, str), f'{where}: timestamp is not a string')
            try:
                parsed = datetime.fromisoformat(value.replace('Z', '+00:00'))
            except ValueError as e:
                raise CheckFailed(f'{where}: not RFC 3339: {value!r}') from e
            expect(
                parsed.utcoffset() is not None
                and parsed.utcoffset().total_seconds() == 0,
                f'{where}: timestamp not in UTC: {value!r}',
            )
        return ', '.join(f'{w}={v}' for w, v in found)

    async def check_ext_not_requested(self) -> str:
        if not self.ext_declared():
            raise Skip(f'card does not declare extension {self.ext_uri}')
        mark = self.mark()
        task = await self.send_task('hello')
        echoed = self.echoed_extensions(mark)
        expect(
            not any(self.ext_uri in e for e in echoed),
            f'extension echoed although not requested: {echoed!r}',
        )
        key = ts_key(self.ext_uri)
        expect(
            not any(key in a.metadata for a in task.artifacts),
            'timestamp metadata present although the extension was not activated',
        )
        return 'not activated'

    # -- main --------------------------------------------------------------

    async def run(self) -> int:
        started = time.monotonic()
        try:
            await self.check('card', self.check_card)
            if self.card is None or self.blocking is None:
                print('# cannot continue without an agent card')
                print(f'{self.passed} passed, {max(self.failed, 1)} failed')
                return 2
            await self.check('send_blocking', self.check_send_blocking)
            await self.check('stream', self.check_stream)
            await self.check('stream_echo', self.check_stream_echo)
            await self.check('get_task', self.check_get_task)
            await self.check(
                'get_task_history_length', self.check_get_task_history_length
            )
            await self.check('get_task_not_found', self.check_get_task_not_found)
            await self.check('list_tasks', self.check_list_tasks)
            await self.check(
                'return_immediately_and_cancel',
                self.check_return_immediately_and_cancel,
            )
            await self.check('cancel_terminal', self.check_cancel_terminal)
            await self.check('input_required', self.check_input_required)
            await self.check('resubscribe', self.check_resubscribe)
            await self.check('subscribe_terminal', self.check_subscribe_terminal)
            await self.check('push_config_crud', self.check_push_config_crud)
            await self.check('ext_header_echo', self.check_ext_header_echo)
            await self.check(
                'ext_header_echo_stream', self.check_ext_header_echo_stream
            )
            await self.check(
                'ext_timestamp_metadata', self.check_ext_timestamp_metadata
            )
            await self.check('ext_not_requested', self.check_ext_not_requested)
        finally:
            await self.http.aclose()
        if self.args.verbose:
            print(f'# {time.monotonic() - started:.2f}s, binding={self.binding}')
        if self.skipped:
            print(f'{self.skipped} skipped')
        print(f'{self.passed} passed, {self.failed} failed')
        return 1 if self.failed else 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description='A2A v1.0 interop checks using the official Python SDK client.'
    )
    parser.add_argument('url', help='agent base URL (card at /.well-known/agent-card.json)')
    parser.add_argument('--binding', choices=sorted(BINDINGS), default='jsonrpc')
    parser.add_argument('--timeout', type=float, default=20.0, help='per check, seconds')
    parser.add_argument('--ext-uri', default=DEFAULT_EXT_URI)
    parser.add_argument('--only', help='comma-separated check names (card always runs)')
    parser.add_argument('--token', help='bearer token sent on every request')
    parser.add_argument('-v', '--verbose', action='store_true')
    args = parser.parse_args()
    if args.only:
        args.only = 'card,' + args.only
    sys.exit(asyncio.run(Runner(args).run()))


if __name__ == '__main__':
    main()
