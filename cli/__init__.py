"""The ``pagefleet`` command: ``run`` a folder through the embedded stack or keep it ``up``; and
against any running stack, embedded or deployed, ``submit``, ``wait``, ``status``, ``get``,
``reconvert`` and ``redrive``.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable
from importlib.metadata import version
from typing import NoReturn

from pagefleet.process_exit import exit_process

__all__ = ["entry", "main"]


def _without_local_extra(missing: ModuleNotFoundError) -> SystemExit:
    # A Lambda or runner install has the core only.
    return SystemExit(
        f"the pagefleet command needs the embedded stack's extra ({missing.name} is missing): "
        "pip install 'pagefleet[local]'"
    )


try:
    from cli import operate
    from cli.failures import Exit, explain
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


EXIT_CODES = """exit codes: 0 done; 1 a document failed (or came out partial), or there is no such
document; 2 usage or settings; 3 the stack cannot be reached (endpoint, credentials, bucket,
queues); 4 still converting when the command stopped waiting; 130 interrupted"""


def _common() -> argparse.ArgumentParser:
    """Options every verb takes, after its name."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--json", action="store_true", help="results as JSON Lines on stdout, one per document"
    )
    common.add_argument(
        "--debug", action="store_true", help="on an error, the traceback rather than one line"
    )
    return common


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
    root = argparse.ArgumentParser(
        prog="pagefleet",
        description=__doc__,
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    root.add_argument("--version", action="version", version=f"pagefleet {version('pagefleet')}")
    subparsers = root.add_subparsers(dest="command", required=True)
    common = _common()

    def command(name: str, help: str, description: str | None = None) -> argparse.ArgumentParser:
        return subparsers.add_parser(
            name, help=help, description=description, parents=[common], epilog=EXIT_CODES
        )

    run = command("run", help="convert every PDF under IN into OUT (embedded stack)")
    run.add_argument("input", nargs="?", help="a PDF or a folder (default: a demo set)")
    run.add_argument("--out", default="out", help="where the outputs land (default: out)")
    run.add_argument(
        "--workers", type=int, default=None, help="runner worker processes (default: one per core)"
    )
    run.set_defaults(func=_embedded("run"))

    up = command(
        "up",
        help="start the embedded stack and keep it running",
        description="Run the handlers and runners on this machine against an embedded moto "
        "server, or against PAGEFLEET_ENDPOINT_URL when it is set (using the stack found there, "
        "creating what is missing). Ctrl-C or SIGTERM drains the jobs in flight.",
    )
    up.add_argument("--workers", type=int, default=None, help="runner worker processes")
    up.add_argument(
        "--port",
        type=int,
        default=None,
        help="the embedded server's port (default 5151, the same on every start; 0: any free)",
    )
    up.add_argument(
        "--out", metavar="DIR", help="copy every finished document here as it lands (as `get`)"
    )
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

    submit = command("submit", help="upload PDFs to inbox/ of a running stack")
    submit.add_argument("files", nargs="+", help="PDFs or folders (their files named .pdf)")
    submit.add_argument("--prefix", default="", help="put them under inbox/PREFIX")
    submit.add_argument(
        "--as-pdf", action="store_true", help="upload a file not named .pdf as <name>.pdf"
    )
    _wait_options(submit, "wait for every job record")
    _stack_options(submit)
    submit.set_defaults(func=operate.submit)

    wait = command("wait", help="await the records of what is uploaded (after submit, Ctrl-C)")
    wait.add_argument(
        "name", nargs="?", default="", help="a document, or a folder under inbox/ (default: all)"
    )
    wait.add_argument("--timeout", type=float, default=None, metavar="S", help="wait at most S")
    _stack_options(wait)
    wait.set_defaults(func=operate.wait)

    status = command("status", help="queues and jobs, or one document's chunks")
    status.add_argument("key", nargs="?", help=DOCUMENT_HELP)
    status.add_argument("--limit", type=int, default=10, help="finished jobs to list")
    status.add_argument(
        "--watch",
        type=float,
        nargs="?",
        const=2.0,
        default=None,
        metavar="S",
        help="look again every S seconds (2) until Ctrl-C",
    )
    _stack_options(status)
    status.set_defaults(func=operate.status)

    reconvert = command(
        "reconvert", help="convert an upload again (its new outputs replace the old ones)"
    )
    reconvert.add_argument("key", help=DOCUMENT_HELP)
    _wait_options(reconvert, "wait for the new record")
    _stack_options(reconvert)
    reconvert.set_defaults(func=operate.reconvert)

    redrive = command(
        "redrive", help="move dead-lettered messages back to their queues (after a fix)"
    )
    redrive.add_argument(
        "--queue", action="append", choices=["ingest", "chunks", "completion"], dest="roles"
    )
    _stack_options(redrive)
    redrive.set_defaults(func=operate.redrive)

    preflight = command(
        "preflight",
        help="before `terraform apply`: what the AWS account lacks for the deploy",
        description="Asks the account, read-only, for what the deploy needs: GPU vCPU quotas, "
        "Lambda concurrency, ECS's service-linked role, the runner subnets' route out, the "
        "runner image, the GPU AMI. Exit 0 only when nothing is missing.",
    )
    planned = preflight.add_mutually_exclusive_group()
    planned.add_argument(
        "--plan", metavar="PLAN_JSON", help="`terraform show -json PLANFILE`: the planned variables"
    )
    planned.add_argument(
        "--stack", metavar="OUTPUTS_JSON", help="`terraform output -json` of a deployment"
    )
    preflight.add_argument("--region", help="the region (default: the plan's)")
    preflight.add_argument("--endpoint-url", help=argparse.SUPPRESS)  # a moto server, in tests
    preflight.set_defaults(func=_preflight)

    get = command("get", help="download finished documents: <rel>.md, .assets/, .json")
    get.add_argument("key", help=DOCUMENT_HELP + ", or a folder of them")
    get.add_argument(
        "--out", default=".", help="where <rel>.md and the rest go, <rel>'s folders kept (.)"
    )
    _stack_options(get)
    get.set_defaults(func=operate.get)
    return root


def _preflight(args: argparse.Namespace) -> int:
    from cli import preflight  # boto3's EC2, IAM, ECR, SSM clients: only when it runs

    return preflight.run(args)


def _wait_options(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--wait", action="store_true", help=help)
    parser.add_argument(
        "--timeout", type=float, default=None, metavar="S", help="--wait waits at most S seconds"
    )


def entry() -> NoReturn:
    """The ``pagefleet`` command: :func:`main`, then an end without the interpreter's
    teardown (pagefleet/process_exit.py), once the embedded stack it ran is stopped."""
    exit_process(main())


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("pagefleet: interrupted", file=sys.stderr)
        return Exit.INTERRUPTED
    except Exception as exc:
        # Settings refused (rule 7), a stack that cannot be reached: one line with the fix.
        failure = explain(exc, bucket=getattr(args, "bucket", None) or "", endpoint=_endpoint(args))
        if failure is None:
            raise
        if args.debug:
            traceback.print_exc()
        print(f"pagefleet: {failure.message}", file=sys.stderr)
        return failure.exit_code


def _endpoint(args: argparse.Namespace) -> str | None:
    return getattr(args, "endpoint_url", None) or os.environ.get("PAGEFLEET_ENDPOINT_URL")


if __name__ == "__main__":
    sys.exit(main())
