"""The last module the Lambda environments' template imports (embedded.environment's
TEMPLATE_PRELOAD): the service models of the clients every handler makes, read once here, so
that each environment forked from the template builds its S3 and SQS clients without reading
and parsing them again (~0.05 CPU s a cold start; pagefleet.aws._data_loader). An EventBridge
client (only with PAGEFLEET_EVENT_BUS set) reads its own."""

from pagefleet.aws import warm_data_loader

warm_data_loader(("s3", "sqs"))
