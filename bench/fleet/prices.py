"""What the deployment costs besides its GPU instances, in $ per 1,000 pages.

Each price is a named field with its source (AWS list prices, us-east-1, read on PRICES_READ;
free tiers left out: they are per account, not per deployment). The volumes each run bills
(requests, bytes, Lambda seconds) come from the simulated run itself where the model has them,
and from the usage estimates below where it does not; each says which it is.

Two networks: the runners' private subnets reach S3 through the NAT gateway, or through an S3
gateway endpoint (terraform/variables.tf asks for one beside the runner subnets,
terraform/examples/complete-vpc creates it), which is free and carries chunk PDFs, results and
ECR's image layers (ECR keeps them in S3) past the NAT gateway. The NAT gateway is there in
both: the vLLM sidecar downloads its model from Hugging Face on an instance's first task
(terraform/variables.tf, runner_subnet_ids).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from bench.fleet.model import Fleet

PRICES_READ = "2026-12-02"
HOURS_PER_MONTH = 730.0  # AWS's own monthly hours in its pricing examples
GB = 1e9

VPC_PRICING = "https://aws.amazon.com/vpc/pricing/"
LAMBDA_PRICING = "https://aws.amazon.com/lambda/pricing/"
SQS_PRICING = "https://aws.amazon.com/sqs/pricing/"
S3_PRICING = "https://aws.amazon.com/s3/pricing/"
CLOUDWATCH_PRICING = "https://aws.amazon.com/cloudwatch/pricing/"
FARGATE_PRICING = "https://aws.amazon.com/fargate/pricing/"


class Prices(BaseModel):
    """List prices (us-east-1) and the usage the simulation does not model, each with its
    source in its description (the report lists them)."""

    model_config = ConfigDict(frozen=True)

    nat_gateway_per_h: float = Field(0.045, description=f"NAT gateway-hour, {VPC_PRICING}")
    nat_per_gb: float = Field(
        0.045, description=f"NAT gateway data processed per GB, {VPC_PRICING}"
    )
    nat_gateways: int = Field(
        1, description="terraform/examples/complete-vpc: one NAT gateway, not one per zone"
    )
    lambda_per_gb_s: float = Field(
        0.0000166667, description=f"Lambda duration per GB-second (x86), {LAMBDA_PRICING}"
    )
    lambda_per_request: float = Field(0.20 / 1e6, description=f"Lambda request, {LAMBDA_PRICING}")
    sqs_per_request: float = Field(
        0.40 / 1e6, description=f"SQS standard queue request (64 KB each), {SQS_PRICING}"
    )
    s3_per_put: float = Field(
        0.005 / 1000, description=f"S3 Standard PUT, COPY, POST, LIST request, {S3_PRICING}"
    )
    s3_per_get: float = Field(
        0.0004 / 1000, description=f"S3 Standard GET, SELECT and other requests, {S3_PRICING}"
    )
    alarm_metric_per_month: float = Field(
        0.10, description=f"CloudWatch standard-resolution alarm metric, {CLOUDWATCH_PRICING}"
    )
    custom_metric_per_month: float = Field(
        0.30, description=f"CloudWatch metric (first 10,000), {CLOUDWATCH_PRICING}"
    )

    # The CPU runners (runner_kind = "cpu"): Fargate, Linux/x86, on demand, billed per second.
    fargate_per_vcpu_h: float = Field(
        0.04048, description=f"Fargate Linux/x86 per vCPU-hour, {FARGATE_PRICING}"
    )
    fargate_per_gb_h: float = Field(
        0.004445, description=f"Fargate Linux/x86 per GB of memory per hour, {FARGATE_PRICING}"
    )
    fargate_storage_per_gb_h: float = Field(
        0.000111,
        description=f"Fargate ephemeral storage per GB-hour past the 20 GB included, "
        f"{FARGATE_PRICING}",
    )
    fargate_included_storage_gb: int = Field(
        20, description=f"Fargate ephemeral storage included in each task, {FARGATE_PRICING}"
    )

    # Usage the model does not simulate: estimates, until a deployment's bill says otherwise.
    alarm_metrics: int = Field(
        40,
        description="estimate: the metrics of terraform/modules/alarms and autoscaling's alarms "
        "(a metric-math alarm is billed per metric it reads), per queue and function",
    )
    custom_metrics: int = Field(
        30,
        description="estimate: Container Insights' per-service and per-cluster metrics and the "
        "runners' GPU and worker telemetry",
    )
    splitter_memory_gb: float = Field(
        2.0, description="terraform/modules/functions/variables.tf memory_mb.splitter (2048 MB)"
    )
    completion_memory_gb: float = Field(
        1.0, description="terraform/modules/functions/variables.tf memory_mb.completion (1024 MB)"
    )
    lambda_pollers: int = Field(
        25,
        description="estimate: five functions read an SQS queue (terraform/modules/functions), "
        "Lambda long-polls each with about five pollers while the queue is idle",
    )
    long_poll_s: float = Field(
        20.0, description="estimate: the longest SQS long poll, an idle receive's period"
    )
    pdf_bytes_per_page: float = Field(
        150e3, description="estimate: a chunk PDF's bytes per page (text pages less, scans more)"
    )
    result_bytes_per_page: float = Field(
        20e3, description="estimate: a chunk result's bytes per page (Markdown, its images)"
    )
    image_gb: float = Field(
        12.0,
        description="estimate: the vLLM sidecar and runner images one new instance pulls "
        "(several GB each, terraform/modules/runners)",
    )
    runner_image_gb: float = Field(
        6.0,
        description="estimate: the runner image alone (CUDA torch and marker, docker/runner."
        "Dockerfile), which every Fargate task pulls: Fargate keeps no image between tasks",
    )
    model_gb: float = Field(
        3.0,
        description="estimate: the OCR model the sidecar downloads from Hugging Face on an "
        "instance's first task (through the NAT gateway with or without the endpoint)",
    )
    s3_puts_per_document: float = Field(
        3, description="estimate: the upload, the assembled Markdown, the job record"
    )
    s3_gets_per_document: float = Field(1, description="estimate: the splitter reads the PDF")
    s3_puts_per_chunk: float = Field(
        3, description="estimate: the chunk PDF, the result, the completion's listing"
    )
    s3_gets_per_chunk: float = Field(
        1, description="estimate: the assembly reads the result (a delivery reads the PDF too)"
    )
    sqs_requests_per_chunk: float = Field(
        4.2,
        description="estimate: a tenth of a send batch, receive, delete, and the result "
        "event's send, receive and delete on the completion queue, over batches of ten",
    )
    sqs_requests_per_document: float = Field(
        3, description="estimate: the upload event's send, the splitter's receive and delete"
    )


def non_gpu(fleet: Fleet, prices: Prices) -> dict[str, Any]:
    """One run's non-GPU cost, item by item, with the S3 gateway endpoint and without it."""
    cfg, p = fleet.config, prices
    docs = fleet.jobs
    chunks = [c for j in docs for c in j.chunks]
    pages = sum(j.doc.pages for j in docs)
    deliveries = len(chunks) + fleet.chunks.redeliveries
    hours = fleet.env.now / 3600
    worker_s = sum(
        ((t.stopped_s if t.stopped_s is not None else fleet.env.now) - t.running_s)
        * cfg.workers_per_task
        for t in fleet.tasks
        if t.running_s is not None
    )
    idle_worker_s = max(0.0, worker_s - fleet.worker_busy_s)
    sqs = (
        p.sqs_requests_per_document * len(docs)
        + p.sqs_requests_per_chunk * len(chunks)
        + fleet.chunks.redeliveries  # a redelivery is one more receive
        + fleet.worker_busy_s / cfg.heartbeat_s  # ChangeMessageVisibility while converting
        + idle_worker_s / p.long_poll_s  # empty receives
        + p.lambda_pollers * fleet.env.now / p.long_poll_s
    )
    split_s = sum(cfg.split_base_s + cfg.split_per_page_s * j.doc.pages for j in docs)
    complete_s = len(chunks) * cfg.completion_check_s + sum(
        cfg.assemble_base_s + cfg.assemble_per_page_s * j.doc.pages for j in docs
    )
    pdf_gb = sum(c.pages for c in chunks) * p.pdf_bytes_per_page / GB
    result_gb = sum(c.pages for c in chunks) * p.result_bytes_per_page / GB
    # A redelivered chunk's PDF is read again; its pages, in proportion.
    pdf_gb *= deliveries / len(chunks) if chunks else 1.0
    instances = len(fleet.instances)
    # A Fargate task (each its own "instance") pulls the runner image and downloads no model.
    image_gb, model_gb = (p.runner_image_gb, 0.0) if cfg.fargate else (p.image_gb, p.model_gb)
    through_s3 = pdf_gb + result_gb + instances * image_gb
    internet = instances * model_gb
    fixed = {
        "nat_hours": p.nat_gateways * p.nat_gateway_per_h * hours,
        "cloudwatch": (
            p.alarm_metrics * p.alarm_metric_per_month
            + p.custom_metrics * p.custom_metric_per_month
        )
        * hours
        / HOURS_PER_MONTH,
    }
    items = fixed | {
        "lambda": (len(docs) + len(chunks)) * p.lambda_per_request
        + (split_s * p.splitter_memory_gb + complete_s * p.completion_memory_gb)
        * p.lambda_per_gb_s,
        "sqs": sqs * p.sqs_per_request,
        "s3_requests": (p.s3_puts_per_document * len(docs) + p.s3_puts_per_chunk * len(chunks))
        * p.s3_per_put
        + (p.s3_gets_per_document * len(docs) + p.s3_gets_per_chunk * len(chunks) + deliveries)
        * p.s3_per_get,
    }

    def priced(nat_gb: float) -> dict[str, Any]:
        bill = items | {"nat_processing": nat_gb * p.nat_per_gb}
        total = sum(bill.values())
        return {
            "nat_gb": round(nat_gb, 2),
            "items": {k: round(v, 4) for k, v in bill.items()},
            "total": round(total, 4),
            "per_1000_pages": round(total / pages * 1000, 4) if pages else None,
        }

    return {"s3_endpoint": priced(internet), "nat_only": priced(internet + through_s3)}
