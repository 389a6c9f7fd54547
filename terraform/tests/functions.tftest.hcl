# The functions module, planned against a mocked provider: handlers, event sources with partial
# batch responses, concurrency, logs, and the IAM actions of each role.

mock_provider "aws" {
  override_during = plan

  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }
  mock_data "aws_partition" {
    defaults = { partition = "aws" }
  }
  mock_data "aws_region" {
    defaults = { name = "us-east-1" }
  }
}

variables {
  name_prefix  = "pf"
  package_path = "tests/fixtures/lambda.zip"
  bucket_name  = "pf-bucket"
  bucket_arn   = "arn:aws:s3:::pf-bucket"
  queue_prefix = "pf"
  kms_key_arn  = "arn:aws:kms:us-east-1:123456789012:key/test"
  queue_arns = {
    ingest     = "arn:aws:sqs:us-east-1:123456789012:pf-ingest"
    chunks     = "arn:aws:sqs:us-east-1:123456789012:pf-chunks"
    completion = "arn:aws:sqs:us-east-1:123456789012:pf-completion"
  }
  dead_letter_queue_arns = {
    ingest     = "arn:aws:sqs:us-east-1:123456789012:pf-ingest-dlq"
    chunks     = "arn:aws:sqs:us-east-1:123456789012:pf-chunks-dlq"
    completion = "arn:aws:sqs:us-east-1:123456789012:pf-completion-dlq"
  }
  environment        = { PAGEFLEET_CHUNK_PAGES = "16" }
  job_event_bus_name = "pf-jobs"
}

run "functions" {
  command = plan

  module {
    source = "./modules/functions"
  }

  # rehearsal/iam.py answers the handlers' tests as AWS answers these roles, from
  # terraform/policies.json: it must grant what this plan grants, to the handlers planned here.
  assert {
    condition = (
      { for k, p in aws_iam_role_policy.this : k => {
        entry_point = aws_lambda_function.this[k].handler, policy = jsondecode(p.policy)
      } } == { for k, r in jsondecode(file("policies.json")).roles : k => r if k != "runner" }
      && jsondecode(file("policies.json")).bucket == var.bucket_name
      && jsondecode(file("policies.json")).queue_prefix == var.queue_prefix
    )
    error_message = "terraform/policies.json is stale: run `make terraform-policies-json`"
  }

  assert {
    condition = { for k, f in aws_lambda_function.this : k => f.handler } == {
      splitter               = "handlers.splitter.lambda_handler"
      completion             = "handlers.completion.lambda_handler"
      dead_letter            = "handlers.completion.dead_letter_handler"
      upload_dead_letter     = "handlers.splitter.dead_letter_handler"
      completion_dead_letter = "handlers.completion.completion_dead_letter_handler"
    }
    error_message = "each function runs its handler"
  }

  assert {
    condition     = aws_iam_role.this["completion_dead_letter"].name == "pf-us-east-1-completion-dead-letter"
    error_message = "IAM role names, global to the account, carry the region: two regions' deployments of one name do not collide"
  }

  assert {
    condition = { for k, m in aws_lambda_event_source_mapping.this : k => m.event_source_arn } == {
      splitter               = var.queue_arns.ingest
      completion             = var.queue_arns.completion
      dead_letter            = var.dead_letter_queue_arns.chunks
      upload_dead_letter     = var.dead_letter_queue_arns.ingest
      completion_dead_letter = var.dead_letter_queue_arns.completion
    }
    error_message = "splitter <- ingest, completion <- completion, dead_letter <- chunks DLQ, upload_dead_letter <- ingest DLQ, completion_dead_letter <- completion DLQ"
  }

  # Rule 3: nothing lands in a DLQ that no function reads.
  assert {
    condition     = alltrue([for arn in values(var.dead_letter_queue_arns) : contains([for m in aws_lambda_event_source_mapping.this : m.event_source_arn], arn)])
    error_message = "every DLQ has a consumer"
  }

  assert {
    condition     = alltrue([for m in aws_lambda_event_source_mapping.this : m.function_response_types == toset(["ReportBatchItemFailures"])])
    error_message = "every event source reports partial batch failures"
  }

  assert {
    condition     = alltrue([for f in aws_lambda_function.this : f.reserved_concurrent_executions == -1 && f.kms_key_arn == var.kms_key_arn])
    error_message = "no function reserves concurrency by default (a new account's quota of 10 leaves none to reserve: AWS keeps 100 unreserved), and each has a KMS-encrypted environment"
  }

  assert {
    condition = { for k, m in aws_lambda_event_source_mapping.this : k => m.scaling_config[0].maximum_concurrency } == {
      splitter = 10, completion = 5, dead_letter = 2, upload_dead_letter = 2, completion_dead_letter = 2
    }
    error_message = "each event source mapping caps the function's concurrency, reserving none"
  }

  assert {
    condition = alltrue([for f in aws_lambda_function.this :
      f.environment[0].variables.PAGEFLEET_BUCKET == "pf-bucket" && f.environment[0].variables.PAGEFLEET_QUEUE_PREFIX == "pf" &&
    f.environment[0].variables.PAGEFLEET_CHUNK_PAGES == "16" && f.environment[0].variables.PAGEFLEET_REGION == "us-east-1"])
    error_message = "the functions get their PAGEFLEET_* settings"
  }

  assert {
    condition     = alltrue([for g in aws_cloudwatch_log_group.this : g.retention_in_days == 30 && g.kms_key_id == var.kms_key_arn])
    error_message = "log groups have a retention and are encrypted"
  }

  # Least privilege: exactly these actions on exactly these resources.
  assert {
    condition = jsonencode({ for s in jsondecode(aws_iam_role_policy.this["splitter"].policy).Statement : s.Sid => [sort(s.Action), sort(s.Resource)] }) == jsonencode({
      ReadUploads        = [["s3:GetObject", "s3:GetObjectVersion"], ["arn:aws:s3:::pf-bucket/inbox/*"]]
      WriteJobs          = [["s3:GetObject", "s3:PutObject"], ["arn:aws:s3:::pf-bucket/jobs/*"]]
      WriteOutbox        = [["s3:DeleteObject", "s3:GetObject", "s3:PutObject"], ["arn:aws:s3:::pf-bucket/outbox/*"]]
      ListBucket         = [["s3:ListBucket"], ["arn:aws:s3:::pf-bucket"]]
      SendChunks         = [["sqs:GetQueueUrl", "sqs:SendMessage"], [var.queue_arns.chunks]]
      PutJobEvents       = [["events:PutEvents"], ["arn:aws:events:us-east-1:123456789012:event-bus/pf-jobs"]]
      ConsumeSourceQueue = [["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"], [var.queue_arns.ingest]]
      UseDataKey         = [["kms:Decrypt", "kms:GenerateDataKey"], [var.kms_key_arn]]
      WriteLogs          = [["logs:CreateLogStream", "logs:PutLogEvents"], ["arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/pf-splitter:*"]]
    })
    error_message = "splitter role: read inbox, write jobs/ and outbox/, send chunks, put job events, consume ingest"
  }

  assert {
    condition = jsonencode({ for s in jsondecode(aws_iam_role_policy.this["completion"].policy).Statement : s.Sid => [sort(s.Action), sort(s.Resource)] }) == jsonencode({
      ReadJobs           = [["s3:GetObject"], ["arn:aws:s3:::pf-bucket/jobs/*"]]
      WriteOutbox        = [["s3:DeleteObject", "s3:GetObject", "s3:PutObject"], ["arn:aws:s3:::pf-bucket/outbox/*"]]
      ListBucket         = [["s3:ListBucket"], ["arn:aws:s3:::pf-bucket"]]
      PutJobEvents       = [["events:PutEvents"], ["arn:aws:events:us-east-1:123456789012:event-bus/pf-jobs"]]
      ConsumeSourceQueue = [["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"], [var.queue_arns.completion]]
      UseDataKey         = [["kms:Decrypt", "kms:GenerateDataKey"], [var.kms_key_arn]]
      WriteLogs          = [["logs:CreateLogStream", "logs:PutLogEvents"], ["arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/pf-completion:*"]]
    })
    error_message = "completion role: read jobs/, write outbox/, put job events on the job event bus alone, consume completion; nothing on inbox/ or chunks"
  }

  assert {
    condition = jsonencode({ for s in jsondecode(aws_iam_role_policy.this["dead_letter"].policy).Statement : s.Sid => [sort(s.Action), sort(s.Resource)] }) == jsonencode({
      RecordFailedChunks = [["s3:PutObject"], ["arn:aws:s3:::pf-bucket/jobs/*/results/*"]]
      ConsumeSourceQueue = [["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"], [var.dead_letter_queue_arns.chunks]]
      UseDataKey         = [["kms:Decrypt", "kms:GenerateDataKey"], [var.kms_key_arn]]
      WriteLogs          = [["logs:CreateLogStream", "logs:PutLogEvents"], ["arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/pf-dead-letter:*"]]
    })
    error_message = "dead-letter role: write chunk results only, consume the chunks DLQ"
  }

  assert {
    condition = jsonencode({ for s in jsondecode(aws_iam_role_policy.this["upload_dead_letter"].policy).Statement : s.Sid => [sort(s.Action), sort(s.Resource)] }) == jsonencode({
      ReadJobs           = [["s3:GetObject"], ["arn:aws:s3:::pf-bucket/jobs/*"]]
      WriteOutbox        = [["s3:DeleteObject", "s3:GetObject", "s3:PutObject"], ["arn:aws:s3:::pf-bucket/outbox/*"]]
      ListBucket         = [["s3:ListBucket"], ["arn:aws:s3:::pf-bucket"]]
      PutJobEvents       = [["events:PutEvents"], ["arn:aws:events:us-east-1:123456789012:event-bus/pf-jobs"]]
      ConsumeSourceQueue = [["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"], [var.dead_letter_queue_arns.ingest]]
      UseDataKey         = [["kms:Decrypt", "kms:GenerateDataKey"], [var.kms_key_arn]]
      WriteLogs          = [["logs:CreateLogStream", "logs:PutLogEvents"], ["arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/pf-upload-dead-letter:*"]]
    })
    error_message = "upload-dead-letter role: read jobs/, write outbox/ records, put job events, consume the ingest DLQ"
  }

  assert {
    condition = jsonencode({ for s in jsondecode(aws_iam_role_policy.this["completion_dead_letter"].policy).Statement : s.Sid => [sort(s.Action), sort(s.Resource)] }) == jsonencode({
      ReadJobs           = [["s3:GetObject"], ["arn:aws:s3:::pf-bucket/jobs/*"]]
      WriteOutbox        = [["s3:DeleteObject", "s3:GetObject", "s3:PutObject"], ["arn:aws:s3:::pf-bucket/outbox/*"]]
      ListBucket         = [["s3:ListBucket"], ["arn:aws:s3:::pf-bucket"]]
      PutJobEvents       = [["events:PutEvents"], ["arn:aws:events:us-east-1:123456789012:event-bus/pf-jobs"]]
      ConsumeSourceQueue = [["sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"], [var.dead_letter_queue_arns.completion]]
      UseDataKey         = [["kms:Decrypt", "kms:GenerateDataKey"], [var.kms_key_arn]]
      WriteLogs          = [["logs:CreateLogStream", "logs:PutLogEvents"], ["arn:aws:logs:us-east-1:123456789012:log-group:/aws/lambda/pf-completion-dead-letter:*"]]
    })
    error_message = "completion-dead-letter role: what completion reads and writes, put job events, consume the completion DLQ"
  }

  assert {
    condition = { for k, f in aws_lambda_function.this : k => f.environment[0].variables.PAGEFLEET_EVENT_BUS if contains(keys(f.environment[0].variables), "PAGEFLEET_EVENT_BUS") } == {
      splitter = "pf-jobs", completion = "pf-jobs", upload_dead_letter = "pf-jobs", completion_dead_letter = "pf-jobs"
    }
    error_message = "the functions that end jobs are told the job event bus (PAGEFLEET_EVENT_BUS), and no other function is"
  }

  assert {
    condition     = alltrue([for f in aws_lambda_function.this : !contains(keys(f.environment[0].variables), "PAGEFLEET_WEBHOOK_URL")])
    error_message = "no webhook unless one is set"
  }
}

run "a_webhook_reaches_the_functions_that_end_jobs" {
  command = plan

  module {
    source = "./modules/functions"
  }

  variables {
    webhook_url = "https://hooks.example.com/pagefleet?token=t"
  }

  assert {
    condition = { for k, f in aws_lambda_function.this : k => f.environment[0].variables.PAGEFLEET_WEBHOOK_URL if contains(keys(f.environment[0].variables), "PAGEFLEET_WEBHOOK_URL") } == {
      splitter = var.webhook_url, completion = var.webhook_url, upload_dead_letter = var.webhook_url, completion_dead_letter = var.webhook_url
    }
    error_message = "PAGEFLEET_WEBHOOK_URL reaches the functions that end jobs alone"
  }
}

run "no_bus_no_events" {
  command = plan

  module {
    source = "./modules/functions"
  }

  variables {
    job_event_bus_name = null
  }

  assert {
    condition = alltrue([for k, p in aws_iam_role_policy.this :
      !anytrue([for s in jsondecode(p.policy).Statement : anytrue([for a in s.Action : startswith(a, "events:")])])
    ])
    error_message = "without a bus no role may put events anywhere"
  }

  assert {
    condition     = alltrue([for f in aws_lambda_function.this : !contains(keys(f.environment[0].variables), "PAGEFLEET_EVENT_BUS")])
    error_message = "without a bus no function is told one"
  }
}

run "mappings_can_be_paused" {
  command = plan

  module {
    source = "./modules/functions"
  }

  variables {
    event_source_mapping_enabled = false
  }

  assert {
    condition     = alltrue([for m in aws_lambda_event_source_mapping.this : !m.enabled])
    error_message = "event_source_mapping_enabled = false pauses every mapping"
  }
}
