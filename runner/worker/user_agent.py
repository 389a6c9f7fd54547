"""Each distinct User-Agent header of a client built once, not twice a request.

botocore 1.43 builds a client's User-Agent string twice for every request: in
``_convert_to_request_dict`` and again in the ``request-created`` handler it registers last
(``UserAgentString.rebuild_and_replace_user_agent_handler``, botocore/client.py
``_register_handlers``), each time sanitising every component character by character
(``sanitize_user_agent_string_component``, botocore/useragent.py): 31-96 us of CPU a build
(timed at load 3 and 5), two for each of the worker's ~1.05 ms requests. The string is the
same for every request of a client but for its ``m/`` component, the feature ids of the
request's context (``_build_feature_metadata``, the only per-request input of
``UserAgentString.to_string``: the rest is the session's, the client config's and the
platform's, fixed when the client is made). So it is built once per set of feature ids and the
same header is sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.context import get_context


def user_agent_once(client: Any) -> None:
    """Have ``client`` (a botocore or aiobotocore client) build each distinct User-Agent once.

    Both of botocore's callers go through the creator's ``to_string`` attribute (the handler
    calls ``self.to_string()``), so an instance attribute in its place serves both."""
    creator = client._user_agent_creator
    build: Callable[[], str] = creator.to_string
    built: dict[frozenset[str], str] = {}  # a handful: the worker's requests use few features

    def to_string() -> str:
        context = get_context()
        features = frozenset(context.features) if context is not None else frozenset()
        if (header := built.get(features)) is None:
            header = built[features] = build()
        return header

    creator.to_string = to_string
