"""The Lambda entry points: thin adapters from SQS events onto the core.

``splitter`` takes upload notifications and splits each PDF into chunks; ``completion`` takes
chunk-result notifications and dead chunk messages and publishes finished documents; ``clients``
holds what a warm environment reuses.
"""

__all__ = ["clients", "completion", "splitter"]
