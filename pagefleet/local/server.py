"""An embedded moto server (S3 + SQS over real HTTP) on a free loopback port.

moto's own ``ThreadedMotoServer``, less one cost: for every request moto's dispatcher finds the
service behind the request's host by listing its package folder (a ``stat`` per service) and
trying every service's URL patterns, under one lock. The answer depends on the host string
alone, so it is kept here per host; under a burst that was a fifth of the server's time.
"""

from __future__ import annotations

import logging
import os
import threading
from types import TracebackType
from typing import Any

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import BaseWSGIServer, make_server

# moto accepts any credentials; boto3 only needs some to sign requests.
FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}


def use_fake_credentials() -> None:
    for name, value in FAKE_CREDENTIALS.items():
        os.environ.setdefault(name, value)


class _HostCachingDispatcher(DomainDispatcherApplication):
    def __init__(self) -> None:
        super().__init__(create_backend_app)
        self._backends: dict[str | None, Any] = {}

    def get_backend_for_host(self, host: str | None) -> Any:
        # Called under the application's lock: the dictionary needs none of its own.
        if host not in self._backends:
            self._backends[host] = super().get_backend_for_host(host)
        return self._backends[host]


class MotoServer:
    """``with MotoServer() as url:`` — moto keeps its state per process, so one server per
    process is enough; tests share it and keep apart by bucket and queue names."""

    def __init__(self) -> None:
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    def start(self) -> str:
        use_fake_credentials()
        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request otherwise
        self._server = make_server(
            "127.0.0.1",
            0,
            _HostCachingDispatcher(),
            threaded=True,
            request_handler=MotoRequestHandler,
        )
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="moto-server", daemon=True
        )
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_port}"
        return self.url

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> str:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
