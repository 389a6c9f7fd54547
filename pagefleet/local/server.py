"""An embedded moto server (S3 + SQS over real HTTP) on a free loopback port."""

from __future__ import annotations

import logging
import os
from types import TracebackType

from moto.server import ThreadedMotoServer

# moto accepts any credentials; boto3 only needs some to sign requests.
FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
}


def use_fake_credentials() -> None:
    for name, value in FAKE_CREDENTIALS.items():
        os.environ.setdefault(name, value)


class MotoServer:
    """``with MotoServer() as url:`` — moto keeps its state per process, so one server per
    process is enough; tests share it and keep apart by bucket and queue names."""

    def __init__(self) -> None:
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.url = ""

    def start(self) -> str:
        use_fake_credentials()
        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request otherwise
        self._server.start()
        host, port = self._server.get_host_and_port()
        self.url = f"http://{host}:{port}"
        return self.url

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> str:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
