"""The embedded stack: a moto server with the deployment's buckets, queues and notifications,
and the pieces that stand in for Lambda's event source mappings (rule 6)."""

from pagefleet.local.dispatch import Dispatcher
from pagefleet.local.provision import Stack, create_stack
from pagefleet.local.server import MotoServer

__all__ = ["Dispatcher", "MotoServer", "Stack", "create_stack"]
