#!/usr/bin/env python3
"""The a2a-bench echo agent on the official Python A2A SDK (a2a-sdk 1.x), under uvicorn.

Usage: python echo_server.py PORT

Serves on 127.0.0.1:PORT, one uvicorn worker, in-memory task store:

* the agent card at ``/.well-known/agent-card.json``;
* JSON-RPC at ``/``: a message with text ``T`` gets an artifact ``echo: T`` (named ``echo``)
  and COMPLETED; the text ``stream100`` streams 100 artifact chunks, then COMPLETED.

This is the same agent the harness runs on every other server (see bench/src/servers/).
"""

from __future__ import annotations

import sys

import uvicorn

from starlette.applications import Starlette

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
    Task,
    TaskState,
    TaskStatus,
)

STREAM_TEXT = 'stream100'
STREAM_CHUNKS = 100


class EchoExecutor(AgentExecutor):
    """Echo, or 100 artifact chunks for ``stream100``."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        task = context.current_task
        if task is None:
            task = Task(
                id=context.task_id,
                context_id=context.context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                history=[context.message] if context.message else [],
            )
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if text == STREAM_TEXT:
            for i in range(STREAM_CHUNKS):
                await updater.add_artifact(
                    [Part(text=f'chunk {i}')],
                    artifact_id='stream',
                    append=i > 0,
                    last_chunk=i == STREAM_CHUNKS - 1,
                )
        else:
            await updater.add_artifact([Part(text=f'echo: {text}')], name='echo')
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or '', context.context_id or '')
        await updater.cancel()


def card(base: str) -> AgentCard:
    return AgentCard(
        name='bench echo agent',
        description="Echoes the text of each message as an artifact; 'stream100' streams 100 chunks.",
        version='1.0.0',
        supported_interfaces=[
            AgentInterface(url=f'{base}/', protocol_binding='JSONRPC', protocol_version='1.0'),
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[
            AgentSkill(
                id='echo',
                name='Echo',
                description='Repeats the message back as an artifact',
                tags=['echo', 'bench'],
                examples=['hello'],
            )
        ],
    )


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit('usage: echo_server.py PORT')
    port = int(sys.argv[1])
    agent_card = card(f'http://127.0.0.1:{port}')
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=agent_card,
    )
    app = Starlette(
        routes=[
            *create_agent_card_routes(agent_card),
            *create_jsonrpc_routes(handler, rpc_url='/'),
        ]
    )
    uvicorn.run(
        app,
        host='127.0.0.1',
        port=port,
        workers=1,
        log_level='warning',
        access_log=False,
        lifespan='off',
    )


if __name__ == '__main__':
    main()
