data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}
data "aws_region" "current" {}

locals {
  account_id = data.aws_caller_identity.current.account_id
  partition  = data.aws_partition.current.partition
  region     = data.aws_region.current.name

  bucket  = var.bucket_arn
  objects = "${var.bucket_arn}/*"

  # What the functions that end a job with its record use: read jobs/, write outbox/ (whose
  # conditional writes read the current object first), and list, without which a missing key
  # is a 403, not a 404.
  record_statements = [
    { sid = "ReadJobs", actions = ["s3:GetObject"], resources = ["${var.bucket_arn}/jobs/*"] },
    { sid = "WriteOutbox", actions = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"], resources = ["${var.bucket_arn}/outbox/*"] },
    { sid = "ListBucket", actions = ["s3:ListBucket"], resources = [local.bucket] },
  ]

  # The functions whose code ends jobs and announces each end (pagefleet/job_events.py): they
  # put events on the job event bus, on no other, and get the settings that say where.
  announcing = ["splitter", "completion", "upload_dead_letter", "completion_dead_letter"]
  # By name, which a plan knows before the bus exists (a null test on its unknown ARN would
  # leave the statements' type unknown, and the functions map with it).
  put_job_events = var.job_event_bus_name == null ? [] : [
    { sid = "PutJobEvents", actions = ["events:PutEvents"], resources = ["arn:${local.partition}:events:${local.region}:${local.account_id}:event-bus/${var.job_event_bus_name}"] },
  ]
  announcing_environment = merge(
    var.job_event_bus_name == null ? {} : { PAGEFLEET_EVENT_BUS = var.job_event_bus_name },
    var.webhook_url == null ? {} : { PAGEFLEET_WEBHOOK_URL = var.webhook_url },
  )

  # Each function: its entry point, the queue that feeds it, and the S3 and SQS actions its
  # code uses (pagefleet/splitting.py, completion.py, outbox.py), by key prefix.
  functions = {
    splitter = {
      handler      = "handlers.splitter.lambda_handler"
      source_queue = var.queue_arns["ingest"]
      # A job that bad input ends at its split is announced by the splitter (pagefleet/splitting.py).
      statements = concat([
        { sid = "ReadUploads", actions = ["s3:GetObject", "s3:GetObjectVersion"], resources = ["${var.bucket_arn}/inbox/*"] },
        # Manifest, chunk PDFs and the "sent" marker; HeadObject is authorised by GetObject.
        { sid = "WriteJobs", actions = ["s3:GetObject", "s3:PutObject"], resources = ["${var.bucket_arn}/jobs/*"] },
        # A failed job's record; conditional writes read the current object first, and the
        # newest upload removes an older job's Markdown and assets (pagefleet/outbox.py).
        { sid = "WriteOutbox", actions = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject"], resources = ["${var.bucket_arn}/outbox/*"] },
        # Without it a HeadObject of a missing key is 403, not 404.
        { sid = "ListBucket", actions = ["s3:ListBucket"], resources = [local.bucket] },
        { sid = "SendChunks", actions = ["sqs:GetQueueUrl", "sqs:SendMessage"], resources = [var.queue_arns["chunks"]] },
      ], local.put_job_events)
    }
    completion = {
      handler      = "handlers.completion.lambda_handler"
      source_queue = var.queue_arns["completion"]
      statements   = concat(local.record_statements, local.put_job_events)
    }
    dead_letter = {
      handler      = "handlers.completion.dead_letter_handler"
      source_queue = var.dead_letter_queue_arns["chunks"]
      statements = [
        { sid = "RecordFailedChunks", actions = ["s3:PutObject"], resources = ["${var.bucket_arn}/jobs/*/results/*"] },
      ]
    }
    # An upload whose event reached the ingest DLQ still ends with a failed record (rule 3).
    upload_dead_letter = {
      handler      = "handlers.splitter.dead_letter_handler"
      source_queue = var.dead_letter_queue_arns["ingest"]
      # Reads the job's "sent" marker: a job that was split after all is left to finish.
      statements = concat(local.record_statements, local.put_job_events)
    }
    # A completion that failed every delivery: one more check, else a failed record (rule 3);
    # what names no job is logged, so nothing in any DLQ goes unseen.
    completion_dead_letter = {
      handler      = "handlers.completion.completion_dead_letter_handler"
      source_queue = var.dead_letter_queue_arns["completion"]
      statements   = concat(local.record_statements, local.put_job_events)
    }
  }

  enabled = var.create ? local.functions : {}

  environment = merge(var.environment, {
    PAGEFLEET_BUCKET             = var.bucket_name
    PAGEFLEET_QUEUE_PREFIX       = var.queue_prefix
    PAGEFLEET_REGION             = local.region
    POWERTOOLS_METRICS_NAMESPACE = "pagefleet"
  })
}

################################################################################
# Log groups
################################################################################

resource "aws_cloudwatch_log_group" "this" {
  for_each = local.enabled

  # checkov:skip=CKV_AWS_338:Operational logs only; the job records in outbox/ are the lasting audit trail, and a year of debug logs costs more than it tells.
  name              = "/aws/lambda/${var.name_prefix}-${replace(each.key, "_", "-")}"
  retention_in_days = var.log_retention_days
  kms_key_id        = var.kms_key_arn

  tags = var.tags
}

################################################################################
# IAM: one role per function, with only what its code does
################################################################################

resource "aws_iam_role" "this" {
  for_each = local.enabled

  # IAM names are global to the account: the region keeps two regions' deployments apart.
  name                 = "${var.name_prefix}-${data.aws_region.current.name}-${replace(each.key, "_", "-")}"
  path                 = var.iam_role_path
  permissions_boundary = var.iam_role_permissions_boundary
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Action    = "sts:AssumeRole"
      Principal = { Service = "lambda.amazonaws.com" }
      Condition = { StringEquals = { "aws:SourceAccount" = local.account_id } }
    }]
  })

  tags = var.tags
}

resource "aws_iam_role_policy" "this" {
  for_each = local.enabled

  name = "pagefleet"
  role = aws_iam_role.this[each.key].id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = concat(
      [for s in each.value.statements : { Sid = s.sid, Effect = "Allow", Action = s.actions, Resource = s.resources }],
      [
        {
          # What the SQS event source mapping does on the function's behalf.
          Sid      = "ConsumeSourceQueue"
          Effect   = "Allow"
          Action   = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"]
          Resource = [each.value.source_queue]
        },
        {
          # Encrypted queues, objects and environment all use the one key.
          Sid      = "UseDataKey"
          Effect   = "Allow"
          Action   = ["kms:Decrypt", "kms:GenerateDataKey"]
          Resource = [var.kms_key_arn]
        },
        {
          Sid      = "WriteLogs"
          Effect   = "Allow"
          Action   = ["logs:CreateLogStream", "logs:PutLogEvents"]
          Resource = ["arn:${local.partition}:logs:${local.region}:${local.account_id}:log-group:/aws/lambda/${var.name_prefix}-${replace(each.key, "_", "-")}:*"]
        },
      ],
    )
  })
}

################################################################################
# Functions
################################################################################

resource "aws_lambda_function" "this" {
  for_each = local.enabled

  # checkov:skip=CKV_AWS_116:Every function is fed by SQS, whose redrive policy is the dead-letter path; a function DLQ only catches asynchronous invocations, which never happen here.
  # checkov:skip=CKV_AWS_117:The functions only call S3, SQS and KMS over public TLS endpoints; a VPC would add NAT or endpoint costs and no protection.
  # checkov:skip=CKV_AWS_272:Code signing needs a signing profile and a signed-artifact pipeline outside this deployment.
  # checkov:skip=CKV_AWS_115:Concurrency is capped by each SQS event source mapping (maximum_concurrency), not reserved: a new account has none to reserve (AWS keeps 100 unreserved); lambda_reserved_concurrency reserves where the quota allows.
  function_name    = "${var.name_prefix}-${replace(each.key, "_", "-")}"
  role             = aws_iam_role.this[each.key].arn
  handler          = each.value.handler
  runtime          = var.runtime
  architectures    = [var.architecture]
  filename         = var.package_path
  source_code_hash = filebase64sha256(var.package_path)
  timeout          = var.timeout_s
  memory_size      = var.memory_mb[each.key]
  kms_key_arn      = var.kms_key_arn

  reserved_concurrent_executions = var.reserved_concurrency[each.key]

  environment {
    variables = merge(
      local.environment,
      contains(local.announcing, each.key) ? local.announcing_environment : {},
      { POWERTOOLS_SERVICE_NAME = "pagefleet-${replace(each.key, "_", "-")}" },
    )
  }

  tracing_config {
    mode = var.tracing_mode
  }

  tags = var.tags

  depends_on = [aws_cloudwatch_log_group.this, aws_iam_role_policy.this]
}

resource "aws_lambda_event_source_mapping" "this" {
  for_each = local.enabled

  event_source_arn = each.value.source_queue
  function_name    = aws_lambda_function.this[each.key].arn
  batch_size       = var.batch_size[each.key]
  enabled          = var.event_source_mapping_enabled

  # The handlers return batchItemFailures (process_partial_response): only failed records return to the queue.
  function_response_types = ["ReportBatchItemFailures"]

  # The poller invokes no more than this at once: the burst cap, with no reservation. Under a
  # reservation it is kept within it (throttled batches would count as receives and push
  # messages towards the DLQ).
  scaling_config {
    maximum_concurrency = (var.reserved_concurrency[each.key] >= 2
      ? min(var.maximum_concurrency[each.key], var.reserved_concurrency[each.key])
    : var.maximum_concurrency[each.key])
  }
}
