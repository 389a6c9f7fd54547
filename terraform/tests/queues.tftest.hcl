# The queues module, planned against a mocked provider: redrive, retention, encryption, policies.

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
  mock_data "aws_iam_policy_document" {
    defaults = { json = "{}" }
  }
}

variables {
  name_prefix          = "pf"
  notifying_bucket_arn = "arn:aws:s3:::pf-bucket"
  kms_key_arn          = "arn:aws:kms:us-east-1:123456789012:key/test"
  queues = {
    ingest     = { visibility_timeout_s = 360, retention_s = 345600, max_receive_count = 5, dlq_retention_s = 1209600, max_message_size = 262144, dlq_visibility_timeout_s = 360 }
    chunks     = { visibility_timeout_s = 60, retention_s = 345600, max_receive_count = 5, dlq_retention_s = 1209600, max_message_size = 262144, dlq_visibility_timeout_s = 360 }
    completion = { visibility_timeout_s = 360, retention_s = 345600, max_receive_count = 7, dlq_retention_s = 1209600, max_message_size = 262144, dlq_visibility_timeout_s = 360 }
  }
}

run "queues_and_dlqs" {
  command = plan

  module {
    source = "./modules/queues"
  }

  override_resource {
    target          = aws_sqs_queue.dlq
    override_during = plan
    values          = { arn = "arn:aws:sqs:us-east-1:123456789012:pf-dlq" }
  }

  assert {
    condition     = toset([for q in aws_sqs_queue.this : q.name]) == toset(["pf-ingest", "pf-chunks", "pf-completion"])
    error_message = "source queues are <prefix>-<role>"
  }

  assert {
    condition     = toset([for q in aws_sqs_queue.dlq : q.name]) == toset(["pf-ingest-dlq", "pf-chunks-dlq", "pf-completion-dlq"])
    error_message = "DLQs are <prefix>-<role>-dlq"
  }

  assert {
    condition     = jsondecode(aws_sqs_queue.this["completion"].redrive_policy).maxReceiveCount == 7 && jsondecode(aws_sqs_queue.this["chunks"].redrive_policy).maxReceiveCount == 5
    error_message = "maxReceiveCount comes from the queue spec"
  }

  assert {
    condition     = jsondecode(aws_sqs_queue.this["chunks"].redrive_policy).deadLetterTargetArn == aws_sqs_queue.dlq["chunks"].arn
    error_message = "a source queue redrives to its DLQ"
  }

  assert {
    condition     = aws_sqs_queue.this["chunks"].visibility_timeout_seconds == 60 && aws_sqs_queue.this["ingest"].visibility_timeout_seconds == 360
    error_message = "visibility timeouts come from the queue spec"
  }

  assert {
    condition     = alltrue([for k, q in aws_sqs_queue.dlq : q.message_retention_seconds >= aws_sqs_queue.this[k].message_retention_seconds])
    error_message = "each DLQ keeps messages at least as long as its source"
  }

  assert {
    condition     = alltrue([for q in concat(values(aws_sqs_queue.this), values(aws_sqs_queue.dlq)) : q.kms_master_key_id == var.kms_key_arn && q.max_message_size >= 65536])
    error_message = "every queue is KMS-encrypted and holds a 64 KiB S3 event"
  }

  assert {
    condition     = length(data.aws_iam_policy_document.queue["ingest"].statement) == 2 && length(data.aws_iam_policy_document.queue["chunks"].statement) == 1
    error_message = "only the notified queues admit S3"
  }

  assert {
    condition = anytrue([
      for s in data.aws_iam_policy_document.queue["completion"].statement :
      s.effect == "Allow" && s.actions == toset(["sqs:SendMessage"]) && anytrue([
        for c in s.condition : c.variable == "aws:SourceArn" && c.values == tolist(["arn:aws:s3:::pf-bucket"])
      ])
    ])
    error_message = "the completion queue admits SendMessage from our bucket only"
  }
}

run "sse_sqs_without_a_key" {
  command = plan

  module {
    source = "./modules/queues"
  }

  variables {
    kms_key_arn = null
  }

  assert {
    condition     = alltrue([for q in values(aws_sqs_queue.this) : q.sqs_managed_sse_enabled])
    error_message = "without a key the queues use SSE-SQS"
  }
}

run "dlq_must_outlive_its_source" {
  command = plan

  module {
    source = "./modules/queues"
  }

  variables {
    queues = {
      chunks = { visibility_timeout_s = 60, retention_s = 345600, max_receive_count = 5, dlq_retention_s = 86400, max_message_size = 262144, dlq_visibility_timeout_s = 360 }
    }
  }

  expect_failures = [var.queues]
}

run "create_false_creates_nothing" {
  command = plan

  module {
    source = "./modules/queues"
  }

  variables {
    create = false
  }

  assert {
    condition     = length(aws_sqs_queue.this) == 0 && length(aws_sqs_queue.dlq) == 0
    error_message = "create = false plans no queue"
  }
}
