"""A stand-in for a class's authenticating reverse proxy, for the browser tests: forwards HTTP
and the websocket to the Streamlit server and adds `HEADER: user` to every request, the way
oauth2-proxy or nginx's auth_request do for a signed-in student. Built on what Streamlit itself
runs on (starlette, uvicorn, websockets); one proxy port per user, in a background thread."""
from __future__ import annotations

import asyncio
import socket
import threading
import time
import urllib.error
import urllib.request

import uvicorn
import websockets
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

_SKIP = {"host", "connection", "upgrade", "keep-alive", "transfer-encoding", "content-length",
         "accept-encoding", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions",
         "sec-websocket-protocol"}


def _app(upstream: str, header: str, user: str) -> Starlette:
    ws_upstream = upstream.replace("http://", "ws://", 1)

    def forward_headers(headers) -> dict:
        out = {k: v for k, v in headers.items() if k.lower() not in _SKIP}
        out[header] = user
        return out

    async def http(request: Request) -> Response:
        url = upstream + request.url.path + (f"?{request.url.query}" if request.url.query else "")
        req = urllib.request.Request(url, headers=forward_headers(request.headers))

        def fetch():
            try:
                with urllib.request.urlopen(req, timeout=30) as r:
                    return r.status, dict(r.headers), r.read()
            except urllib.error.HTTPError as e:
                return e.code, dict(e.headers), e.read()
        status, headers, body = await asyncio.to_thread(fetch)
        keep = {k: v for k, v in headers.items() if k.lower() not in _SKIP and k.lower() != "content-encoding"}
        return Response(body, status_code=status, headers=keep)

    async def socket_route(client: WebSocket) -> None:
        protos = [p.strip() for p in client.headers.get("sec-websocket-protocol", "").split(",") if p.strip()]
        async with websockets.connect(ws_upstream + client.url.path, subprotocols=protos or None,
                                      additional_headers=forward_headers(client.headers),
                                      max_size=None) as up:
            await client.accept(subprotocol=up.subprotocol)

            async def down():
                async for msg in up:
                    if isinstance(msg, bytes):
                        await client.send_bytes(msg)
                    else:
                        await client.send_text(msg)

            task = asyncio.create_task(down())
            try:
                while True:
                    msg = await client.receive()
                    if msg["type"] == "websocket.disconnect":
                        break
                    await up.send(msg.get("bytes") if msg.get("bytes") is not None else msg.get("text"))
            except WebSocketDisconnect:
                pass
            finally:
                task.cancel()

    return Starlette(routes=[WebSocketRoute("/_stcore/stream", socket_route),
                             Route("/{path:path}", http, methods=["GET"])])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(upstream: str, header: str, users: list[str]) -> dict[str, str]:
    """Proxies for `users`, each on its own port in a daemon thread; {user: proxy url}."""
    urls = {}
    for user in users:
        port = _free_port()
        config = uvicorn.Config(_app(upstream, header, user), host="127.0.0.1", port=port, log_level="warning")
        server = uvicorn.Server(config)
        threading.Thread(target=server.run, daemon=True).start()
        deadline = time.time() + 10
        while not server.started and time.time() < deadline:
            time.sleep(0.05)
        urls[user] = f"http://127.0.0.1:{port}"
    return urls
