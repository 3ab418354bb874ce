#!/usr/bin/env python3
"""A2A v1.0 echo agent built on the official Python SDK (a2a-sdk 1.x).

Interop peer for a2a-runtime. It serves:

* the agent card at ``/.well-known/agent-card.json``;
* the JSON-RPC binding at ``/`` (``POST``);
* the HTTP+JSON (REST) binding under ``/rest`` (e.g. ``POST /rest/message:send``);
* the gRPC binding (``lf.a2a.v1.A2AService``, plain HTTP/2) on a second free
  port, listed in the card as a ``GRPC`` interface at ``127.0.0.1:<port>``.

Echo conventions (text of the user message, trimmed):

* ``stream``: WORKING, three artifact chunks with one artifactId (the 2nd and
  3rd have ``append: true``, the 3rd has ``lastChunk: true``), COMPLETED.
* ``wait``: WORKING, then waits until the task is canceled.
* ``ask``: INPUT_REQUIRED (a follow-up message on the same task is echoed).
* anything else, ``T``: WORKING, an artifact with text ``echo: T``, COMPLETED.

The card declares the Timestamp extension (required: false). When a request
activates it with the ``A2A-Extensions`` header, the response carries
``A2A-Extensions: <uri>`` and every agent message and artifact written by this
executor gets ``metadata[<uri without scheme>/timestamp] = <RFC 3339 UTC>``
and ``extensions: [<uri>]``.

Usage::

    python echo_server.py [PORT] [--host 127.0.0.1] [--public-url URL]
                          [--push-delivery]

The port comes from argv, else ``$PORT``, else a free port. When the socket
is listening the server prints ``READY <port>`` on stdout (flushed).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import socket
import sys

from datetime import datetime, timezone

import grpc
import uvicorn

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Mount

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.grpc_handler import (
    DefaultGrpcServerCallContextBuilder,
    GrpcHandler,
)
from a2a.types import a2a_pb2_grpc
from a2a.server.routes import (
    DefaultServerCallContextBuilder,
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import (
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)


TIMESTAMP_EXTENSION_URI = os.environ.get(
    'A2A_TIMESTAMP_EXTENSION_URI',
    'https://github.com/a2aproject/a2a-samples/extensions/timestamp/v1',
)


def timestamp_metadata_key(uri: str) -> str:
    """`https://host/path/v1` -> `host/path/v1/timestamp`."""
    return uri.split('://', 1)[-1] + '/timestamp'


TIMESTAMP_KEY = timestamp_metadata_key(TIMESTAMP_EXTENSION_URI)
SUPPORTED_EXTENSIONS = {TIMESTAMP_EXTENSION_URI}

# Key under which the per-request set of activated extension URIs lives, both
# in the ASGI scope (read by ExtensionEchoMiddleware) and in
# ServerCallContext.state (read by the executor).
ACTIVATED_KEY = 'a2a.activated_extensions'

logger = logging.getLogger('echo_server')


def now_rfc3339() -> str:
    return (
        datetime.now(timezone.utc).isoformat(timespec='milliseconds')
        .replace('+00:00', 'Z')
    )


# --------------------------------------------------------------------------
# Extension activation and echo.
#
# a2a-sdk 1.x parses the request's A2A-Extensions header into
# ServerCallContext.requested_extensions but has NO API to report activated
# extensions back (0.3.x had RequestContext.add_activated_extension() and
# echoed X-A2A-Extensions; it was removed in 1.0). We therefore:
#   1. activate requested ∩ supported URIs in a custom context builder, and
#   2. add the A2A-Extensions response header in a tiny ASGI middleware.
# --------------------------------------------------------------------------


class ActivatingContextBuilder(DefaultServerCallContextBuilder):
    """Builds the SDK call context and activates supported extensions."""

    def build(self, request: Request) -> ServerCallContext:
        ctx = super().build(request)
        activated = request.scope.get(ACTIVATED_KEY)
        if activated is None:
            activated = set()
            request.scope[ACTIVATED_KEY] = activated
        activated.update(ctx.requested_extensions & SUPPORTED_EXTENSIONS)
        ctx.state[ACTIVATED_KEY] = activated
        return ctx


class ActivatingGrpcContextBuilder(DefaultGrpcServerCallContextBuilder):
    """The gRPC twin of ActivatingContextBuilder."""

    def build(self, context: grpc.aio.ServicerContext) -> ServerCallContext:
        ctx = super().build(context)
        ctx.state[ACTIVATED_KEY] = ctx.requested_extensions & SUPPORTED_EXTENSIONS
        return ctx


class ExtensionEchoInterceptor(grpc.aio.ServerInterceptor):
    """Sends `a2a-extensions` (the activated URIs) as initial metadata."""

    async def intercept_service(self, continuation, details):
        handler = await continuation(details)
        if handler is None:
            return None
        requested: list[str] = [
            v for k, v in (details.invocation_metadata or ()) if k == 'a2a-extensions'
        ]
        activated = {
            u.strip() for v in requested for u in v.split(',') if u.strip()
        } & SUPPORTED_EXTENSIONS
        if not activated:
            return handler
        echo = (('a2a-extensions', ','.join(sorted(activated))),)

        if handler.unary_unary:
            inner = handler.unary_unary

            async def unary(request, context):
                await context.send_initial_metadata(echo)
                return await inner(request, context)

            return handler._replace(unary_unary=unary)
        if handler.unary_stream:
            inner_stream = handler.unary_stream

            async def stream(request, context):
                await context.send_initial_metadata(echo)
                async for item in inner_stream(request, context):
                    yield item

            return handler._replace(unary_stream=stream)
        return handler


class ExtensionEchoMiddleware:
    """Pure ASGI middleware: adds `A2A-Extensions` to the response head."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope['type'] != 'http':
            await self.app(scope, receive, send)
            return
        activated: set[str] = set()
        scope[ACTIVATED_KEY] = activated

        async def send_wrapper(message):
            if message['type'] == 'http.response.start' and activated:
                headers = [
                    (k, v)
                    for k, v in message.get('headers', [])
                    if k.lower() != b'a2a-extensions'
                ]
                headers.append(
                    (b'a2a-extensions', ','.join(sorted(activated)).encode())
                )
                message = {**message, 'headers': headers}
            await send(message)

        await self.app(scope, receive, send_wrapper)


# --------------------------------------------------------------------------
# Executor
# --------------------------------------------------------------------------


class EchoExecutor(AgentExecutor):
    """Echo agent with the `stream` / `wait` / `ask` conventions."""

    @staticmethod
    def _timestamps_on(context: RequestContext) -> bool:
        call_context = context.call_context
        if call_context is None:
            return False
        activated = call_context.state.get(ACTIVATED_KEY) or set()
        return TIMESTAMP_EXTENSION_URI in activated

    @staticmethod
    def _ext_fields(ts_on: bool) -> dict:
        if not ts_on:
            return {}
        return {
            'metadata': {TIMESTAMP_KEY: now_rfc3339()},
            'extensions': [TIMESTAMP_EXTENSION_URI],
        }

    def _agent_message(
        self, updater: TaskUpdater, text: str, ts_on: bool
    ) -> Message:
        msg = updater.new_agent_message([Part(text=text)])
        if ts_on:
            msg.metadata.update({TIMESTAMP_KEY: now_rfc3339()})
            msg.extensions.append(TIMESTAMP_EXTENSION_URI)
        return msg

    async def execute(
        self, context: RequestContext, event_queue: EventQueue
    ) -> None:
        text = context.get_user_input().strip()
        ts_on = self._timestamps_on(context)

        task = context.current_task
        if task is None:
            task = Task(
                id=context.task_id,
                context_id=context.context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                history=[context.message] if context.message else [],
            )
            task.status.timestamp.GetCurrentTime()
            await event_queue.enqueue_event(task)

        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()

        if text == 'wait':
            # Park until the framework cancels this coroutine (CancelTask).
            await asyncio.Event().wait()
            return

        if text == 'ask':
            await updater.requires_input(
                message=self._agent_message(
                    updater, 'input required: send another message', ts_on
                )
            )
            return

        if text == 'stream':
            artifact_id = f'{task.id}-stream'
            chunks = ['chunk 1', 'chunk 2', 'chunk 3']
            for i, chunk in enumerate(chunks):
                await updater.add_artifact(
                    [Part(text=chunk)],
                    artifact_id=artifact_id,
                    name='stream',
                    append=i > 0,
                    last_chunk=i == len(chunks) - 1,
                    **self._ext_fields(ts_on),
                )
                await asyncio.sleep(0.05)
            await updater.complete()
            return

        await updater.add_artifact(
            [Part(text=f'echo: {text}')],
            name='echo',
            **self._ext_fields(ts_on),
        )
        await updater.complete()

    async def cancel(
        self, context: RequestContext, event_queue: EventQueue
    ) -> None:
        updater = TaskUpdater(
            event_queue, context.task_id or '', context.context_id or ''
        )
        await updater.cancel()


# --------------------------------------------------------------------------
# App wiring
# --------------------------------------------------------------------------


def build_card(base: str, grpc_url: str) -> AgentCard:
    base = base.rstrip('/')
    return AgentCard(
        name='a2a-runtime interop echo (python a2a-sdk)',
        description='Echo agent for A2A v1.0 interop tests. '
        'Texts: "stream", "wait", "ask", anything else is echoed.',
        version='1.0.0',
        supported_interfaces=[
            AgentInterface(
                url=f'{base}/',
                protocol_binding='JSONRPC',
                protocol_version='1.0',
            ),
            AgentInterface(
                url=f'{base}/rest',
                protocol_binding='HTTP+JSON',
                protocol_version='1.0',
            ),
            AgentInterface(
                url=grpc_url,
                protocol_binding='GRPC',
                protocol_version='1.0',
            ),
        ],
        capabilities=AgentCapabilities(
            streaming=True,
            push_notifications=True,
            extensions=[
                AgentExtension(
                    uri=TIMESTAMP_EXTENSION_URI,
                    description='Adds RFC 3339 timestamps to agent messages '
                    'and artifacts when activated.',
                    required=False,
                )
            ],
        ),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[
            AgentSkill(
                id='echo',
                name='Echo',
                description='Echoes the text back as an artifact.',
                tags=['echo', 'test'],
                examples=['hello', 'stream', 'wait', 'ask'],
            )
        ],
    )


def build_app(
    public_url: str, grpc_url: str, push_delivery: bool
) -> tuple[Starlette, DefaultRequestHandler]:
    card = build_card(public_url, grpc_url)
    push_store = InMemoryPushNotificationConfigStore()
    push_sender = None
    if push_delivery:
        import httpx  # noqa: PLC0415

        from a2a.server.tasks import BasePushNotificationSender  # noqa: PLC0415

        push_sender = BasePushNotificationSender(httpx.AsyncClient(), push_store)

    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        push_config_store=push_store,
        push_sender=push_sender,
    )
    ctx_builder = ActivatingContextBuilder()
    routes = [
        *create_agent_card_routes(card),
        Mount(
            '/rest',
            routes=create_rest_routes(handler, context_builder=ctx_builder),
        ),
        *create_jsonrpc_routes(handler, rpc_url='/', context_builder=ctx_builder),
    ]
    app = Starlette(routes=routes)
    app.add_middleware(ExtensionEchoMiddleware)
    return app, handler


def free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


async def serve(
    host: str, port: int, public_url: str | None, push_delivery: bool
) -> None:
    grpc_port = free_port(host)
    app, handler = build_app(
        public_url or f'http://{host}:{port}', f'{host}:{grpc_port}', push_delivery
    )
    grpc_server = grpc.aio.server(interceptors=[ExtensionEchoInterceptor()])
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(
        GrpcHandler(handler, context_builder=ActivatingGrpcContextBuilder()),
        grpc_server,
    )
    grpc_server.add_insecure_port(f'{host}:{grpc_port}')
    await grpc_server.start()
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        workers=1,
        log_level=os.environ.get('ECHO_LOG_LEVEL', 'warning'),
        lifespan='off',
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()  # re-raise startup failure
            return
        await asyncio.sleep(0.02)
    print(f'READY {port}', flush=True)
    await task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('port', nargs='?', type=int, default=None)
    parser.add_argument('--host', default=os.environ.get('HOST', '127.0.0.1'))
    parser.add_argument(
        '--public-url',
        default=os.environ.get('PUBLIC_URL'),
        help='base URL advertised in the card (default http://HOST:PORT)',
    )
    parser.add_argument(
        '--push-delivery',
        action='store_true',
        help='actually POST push notifications to registered webhooks',
    )
    args = parser.parse_args()
    port = args.port
    if port is None and os.environ.get('PORT'):
        port = int(os.environ['PORT'])
    if not port:
        port = free_port(args.host)
    logging.basicConfig(
        level=os.environ.get('ECHO_LOG_LEVEL', 'WARNING').upper(),
        stream=sys.stderr,
    )
    try:
        asyncio.run(serve(args.host, port, args.public_url, args.push_delivery))
    except KeyboardInterrupt:
        pass


if __name__ == '__main__':
    main()
