"""The ``pagefleet`` command: ``run`` a folder through the embedded stack or keep it ``up``; and
against any running stack, embedded or deployed, ``submit``, ``status``, ``redrive`` and ``get``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from pagefleet.settings import SettingsRefused

__all__ = ["main"]


def _without_local_extra(missing: ModuleNotFoundError) -> SystemExit:
    # A Lambda or runner install has the core only.
    return SystemExit(
        f"the pagefleet command needs the embedded stack's extra ({missing.name} is missing): "
        "pip install 'pagefleet[local]'"
    )


try:
    from cli import operate
except ModuleNotFoundError as missing:
    raise _without_local_extra(missing) from None


def _embedded(command: str) -> Callable[[argparse.Namespace], int]:
    """``run`` and ``up`` start the embedded stack (moto): imported only when one of them runs,
    so the commands for a deployed stack never load moto."""

    def start(args: argparse.Namespace) -> int:
        try:
            from cli import embedded_stack
        except ModuleNotFoundError as missing:
            raise _without_local_extra(missing) from None
        return int(getattr(embedded_stack, command)(args))

    return start


DOCUMENT_HELP = "a document: inbox/<rel>.pdf, outbox/<rel>.md or just <rel>"


def _stack_options(parser: argparse.ArgumentParser) -> None:
    where = parser.add_argument_group(
        "which stack", "default: PAGEFLEET_* from the environment (AWS unless an endpoint is set)"
    )
    where.add_argument(
        "--stack",
        metavar="OUTPUTS_JSON",
        help="a deployed stack: the file `terraform output -json > FILE` wrote",
    )
    where.add_argument(
        "--endpoint-url", help="an S3/SQS endpoint other than AWS's (`pagefleet up` prints one)"
    )
    where.add_argument("--bucket")
    where.add_argument("--region")
    where.add_argument("--queue-prefix")


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="pagefleet", description=__doc__)
    commands = root.add_subparsers(dest="command", required=True)

    run = commands.add_parser("run", help="convert every PDF under IN into OUT (embedded stack)")
    run.add_argument("input", nargs="?", help="a PDF or a folder (default: a demo set)")
    run.add_argument("--out", default="out", help="where the outputs land (default: out)")
    run.add_argument(
        "--workers", type=int, default=None, help="runner worker processes (default: one per core)"
    )
    run.set_defaults(func=_embedded("run"))

    up = commands.add_parser(
        "up",
        help="start the embedded stack and keep it running",
        description="Run the handlers and runners on this machine against an embedded moto "
        "server, or against PAGEFLEET_ENDPOINT_URL when it is set (using the stack found there, "
        "creating what is missing). Ctrl-C or SIGTERM drains the jobs in flight.",
    )
    up.add_argument("--workers", type=int, default=None, help="runner worker processes")
    up.add_argument(
        "--log-file", help="append every log line (runner, handlers, metrics) to this file"
    )
    up.add_argument(
        "--verbose", action="store_true", help="every log line on the terminal, not only warnings"
    )
    up.add_argument(
        "--drain-timeout",
        type=float,
        default=60.0,
        metavar="S",
        help="on Ctrl-C/SIGTERM, how long jobs in flight get to finish (default 60)",
    )
    up.add_argument(
        "--keep-jobs",
        type=float,
        default=10.0,
        metavar="S",
        help="delete a job's internals (jobs/<id>/, every version) this long after it ended, "
        "as the lifecycle rule does on AWS (default 10)",
    )
    up.set_defaults(func=_embedded("up"))

    submit = commands.add_parser("submit", help="upload PDFs to inbox/ of a running stack")
    submit.add_argument("files", nargs="+", help="PDFs or folders of PDFs")
    submit.add_argument("--prefix", default="", help="put them under inbox/PREFIX")
    submit.add_argument("--wait", action="store_true", help="wait for every job record")
    submit.add_argument("--timeout", type=float, default=None, help="seconds --wait waits")
    _stack_options(submit)
    submit.set_defaults(func=operate.submit)

    status = commands.add_parser("status", help="queues and jobs, or one document's chunks")
    status.add_argument("key", nargs="?", help=DOCUMENT_HELP)
    status.add_argument("--limit", type=int, default=10, help="finished jobs to list")
    _stack_options(status)
    status.set_defaults(func=operate.status)

    redrive = commands.add_parser(
        "redrive", help="move dead-lettered messages back to their queues (after a fix)"
    )
    redrive.add_argument(
        "--queue", action="append", choices=["ingest", "chunks", "completion"], dest="roles"
    )
    _stack_options(redrive)
    redrive.set_defaults(func=operate.redrive)

    get = commands.add_parser("get", help="download a finished document: .md, .assets/, .json")
    get.add_argument("key", help=DOCUMENT_HELP)
    get.add_argument("--out", default=".", help="folder to write <rel>.md and friends into")
    _stack_options(get)
    get.set_defaults(func=operate.get)
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    try:
        return int(args.func(args))
    except SettingsRefused as exc:  # rule 7: refused at start, in one line
        print(f"pagefleet: settings refused: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
