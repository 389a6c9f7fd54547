"""The Lambda entry points: thin adapters from SQS events onto the core.

``splitter`` takes upload notifications and splits each PDF into chunks; ``completion`` takes
chunk-result notifications, dead chunk messages and dead completion messages and publishes
finished documents; ``clients`` holds what a warm environment reuses; ``batch`` makes an entry
point of a record handler.
"""

__all__ = ["batch", "clients", "completion", "splitter"]
