"""The embedded stack: a moto server with the deployment's buckets, queues and notifications,
and the pieces that stand in for Lambda's event source mappings (rule 6).

Names are imported on first use, so that a Lambda environment process
(:mod:`embedded.environment`) does not import moto.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from embedded.dispatch import Dispatcher
    from embedded.provision import Stack, create_stack
    from embedded.server import MotoServer

__all__ = ["Dispatcher", "MotoServer", "Stack", "create_stack"]

_WHERE = {
    "Dispatcher": "embedded.dispatch",
    "MotoServer": "embedded.server",
    "Stack": "embedded.provision",
    "create_stack": "embedded.provision",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)
