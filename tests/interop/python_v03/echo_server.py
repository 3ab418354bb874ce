"""Interop peer for a2a-runtime: an agent on the official A2A Python SDK v0.3 (JSON-RPC, or with
`--rest` HTTP+JSON only: its `/v1/...` routes, the card preferring `HTTP+JSON`).

By message text: `wait` works until canceled; `ask` asks for input (a follow-up completes);
`stream` sends three artifact chunks; anything else is echoed as an artifact `echo: <text>`.
Push notifications are declared (configs stored, nothing delivered).

Usage: python echo_server.py [--host 127.0.0.1] [--rest]. Prints `READY <port>` once listening.
"""

import argparse
import asyncio
import socket

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2ARESTFastAPIApplication, A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryPushNotificationConfigStore, InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part, TextPart
from a2a.utils import new_task


class Echo(AgentExecutor):
    def __init__(self):
        self.waiting = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        task = context.current_task
        if task is None:
            task = new_task(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if task.status.state.value == 'input-required':
            await updater.add_artifact([Part(root=TextPart(text=f'echo: {text}'))], name='echo')
            await updater.complete()
            return
        if text == 'wait':
            # Works until canceled, saying so now and then (a resubscriber sees an event).
            done = asyncio.Event()
            self.waiting[task.id] = done
            while not done.is_set():
                await updater.start_work()
                try:
                    await asyncio.wait_for(done.wait(), 0.2)
                except asyncio.TimeoutError:
                    pass
            return
        if text == 'ask':
            await updater.requires_input(updater.new_agent_message([Part(root=TextPart(text='Your name?'))]))
            return
        if text == 'stream':
            await updater.start_work()
            for i in range(1, 4):
                await updater.add_artifact(
                    [Part(root=TextPart(text=f'chunk {i}'))],
                    artifact_id='stream',
                    append=i > 1,
                    last_chunk=i == 3,
                )
            await updater.complete()
            return
        await updater.add_artifact([Part(root=TextPart(text=f'echo: {text}'))], name='echo')
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        done = self.waiting.pop(task.id, None)
        if done:
            done.set()
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.cancel()


def free_port(host):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


async def serve(host, port, rest):
    url = f'http://{host}:{port}' if rest else f'http://{host}:{port}/'
    transport = 'HTTP+JSON' if rest else 'JSONRPC'
    card = AgentCard(
        name='a2a-sdk 0.3 echo',
        description='Echoes (interop peer)',
        url=url,
        preferred_transport=transport,
        additional_interfaces=[AgentInterface(transport=transport, url=url)],
        version='1.0.0',
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=['text/plain'],
        default_output_modes=['text/plain'],
        skills=[AgentSkill(id='echo', name='echo', description='echoes', tags=['echo'])],
    )
    handler = DefaultRequestHandler(
        agent_executor=Echo(),
        task_store=InMemoryTaskStore(),
        push_config_store=InMemoryPushNotificationConfigStore(),
    )
    if rest:
        app = A2ARESTFastAPIApplication(agent_card=card, http_handler=handler).build()
    else:
        app = A2AStarletteApplication(agent_card=card, http_handler=handler).build()
    config = uvicorn.Config(app, host=host, port=port, log_level='warning', lifespan='off')
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
            return
        await asyncio.sleep(0.02)
    print(f'READY {port}', flush=True)
    await task


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--host', default='127.0.0.1')
    parser.add_argument('--rest', action='store_true')
    args = parser.parse_args()
    asyncio.run(serve(args.host, free_port(args.host), args.rest))


if __name__ == '__main__':
    main()
