# The storage module, planned against a mocked provider: encryption, public access, TLS,
# lifecycle and the notification filters.

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
  mock_resource "aws_kms_key" {
    defaults = { arn = "arn:aws:kms:us-east-1:123456789012:key/test" }
  }
}

variables {
  bucket_name          = "pf-bucket"
  jobs_expiration_days = 5
  notifications = [
    { id = "ingest-inbox-pdf", queue_arn = "arn:aws:sqs:us-east-1:123456789012:pf-ingest", events = ["s3:ObjectCreated:*"], filter_prefix = "inbox/", filter_suffix = ".pdf" },
    { id = "ingest-inbox-PDF", queue_arn = "arn:aws:sqs:us-east-1:123456789012:pf-ingest", events = ["s3:ObjectCreated:*"], filter_prefix = "inbox/", filter_suffix = ".PDF" },
    { id = "completion-jobs-result.json", queue_arn = "arn:aws:sqs:us-east-1:123456789012:pf-completion", events = ["s3:ObjectCreated:*"], filter_prefix = "jobs/", filter_suffix = ".result.json" },
  ]
}

run "bucket" {
  command = plan

  module {
    source = "./modules/storage"
  }

  assert {
    condition     = aws_s3_bucket_versioning.this[0].versioning_configuration[0].status == "Enabled"
    error_message = "versioning is on"
  }

  assert {
    condition = alltrue([for r in aws_s3_bucket_server_side_encryption_configuration.this[0].rule :
      one(r.apply_server_side_encryption_by_default).sse_algorithm == "aws:kms" &&
    one(r.apply_server_side_encryption_by_default).kms_master_key_id == aws_kms_key.this[0].arn])
    error_message = "objects are encrypted with the deployment's KMS key"
  }

  assert {
    condition     = aws_kms_key.this[0].enable_key_rotation
    error_message = "the key rotates"
  }

  assert {
    condition = alltrue([
      aws_s3_bucket_public_access_block.this[0].block_public_acls,
      aws_s3_bucket_public_access_block.this[0].block_public_policy,
      aws_s3_bucket_public_access_block.this[0].ignore_public_acls,
      aws_s3_bucket_public_access_block.this[0].restrict_public_buckets,
    ])
    error_message = "all public access is blocked"
  }

  assert {
    condition = anytrue([for s in data.aws_iam_policy_document.bucket[0].statement :
      s.effect == "Deny" && anytrue([for c in s.condition : c.variable == "aws:SecureTransport" && c.values == tolist(["false"])])
    ])
    error_message = "the bucket policy denies requests without TLS"
  }

  assert {
    condition = anytrue([for r in aws_s3_bucket_lifecycle_configuration.this[0].rule :
      r.status == "Enabled" && one(r.filter).prefix == "jobs/" && one(r.expiration).days == 5
    ])
    error_message = "jobs/ expires after jobs_expiration_days"
  }

  assert {
    condition     = [for r in aws_s3_bucket_lifecycle_configuration.this[0].rule : one(r.filter).prefix] == ["jobs/", ""]
    error_message = "only jobs/ expires; the other rule (all objects) only cleans up old versions and uploads"
  }

  assert {
    condition = jsonencode([for q in aws_s3_bucket_notification.this[0].queue : [q.id, q.filter_prefix, q.filter_suffix, q.events]]) == jsonencode([
      ["ingest-inbox-pdf", "inbox/", ".pdf", ["s3:ObjectCreated:*"]],
      ["ingest-inbox-PDF", "inbox/", ".PDF", ["s3:ObjectCreated:*"]],
      ["completion-jobs-result.json", "jobs/", ".result.json", ["s3:ObjectCreated:*"]],
    ])
    error_message = "each notification keeps its id, prefix, suffix and events"
  }

  assert {
    condition = jsonencode([for s in data.aws_iam_policy_document.kms[0].statement : [s.actions, s.resources, s.condition]
      if anytrue([for p in s.principals : contains(tolist(p.identifiers), "s3.amazonaws.com")])
    ]) == jsonencode([[["kms:Decrypt", "kms:GenerateDataKey"], ["*"], []]])
    error_message = "S3's key statement is the one AWS documents for notifications to encrypted queues: GenerateDataKey and Decrypt, no condition"
  }

  assert {
    condition     = length([for s in data.aws_iam_policy_document.kms[0].statement : s if s.sid == "CloudWatchAlarmsToEncryptedTopic"]) == 0
    error_message = "CloudWatch gets no use of the key without an alarm topic"
  }
}

run "alarm_topic_encrypted_with_the_key" {
  command = plan

  module {
    source = "./modules/storage"
  }

  variables {
    allow_cloudwatch_alarms = true
  }

  assert {
    condition = jsonencode([for s in data.aws_iam_policy_document.kms[0].statement : [s.actions, s.condition]
      if s.sid == "CloudWatchAlarmsToEncryptedTopic" && anytrue([for p in s.principals : contains(tolist(p.identifiers), "cloudwatch.amazonaws.com")])
    ]) == jsonencode([[["kms:Decrypt", "kms:GenerateDataKey*"], []]])
    error_message = "CloudWatch alarms may encrypt notifications to the alarm topic (AWS's statement for encrypted topics)"
  }
}

run "no_notifications_no_configuration" {
  command = plan

  module {
    source = "./modules/storage"
  }

  variables {
    notifications = []
  }

  assert {
    condition     = length(aws_s3_bucket_notification.this) == 0
    error_message = "no notification configuration without notifications"
  }
}

run "an_existing_key" {
  command = plan

  variables {
    kms_key_arn = "arn:aws:kms:us-east-1:123456789012:key/theirs"
  }

  module {
    source = "./modules/storage"
  }

  assert {
    condition     = length(aws_kms_key.this) == 0 && length(aws_kms_alias.this) == 0
    error_message = "with kms_key_arn no key of the module's own is made"
  }

  assert {
    condition = alltrue([for r in aws_s3_bucket_server_side_encryption_configuration.this[0].rule :
      one(r.apply_server_side_encryption_by_default).kms_master_key_id == var.kms_key_arn &&
    one(r.apply_server_side_encryption_by_default).sse_algorithm == "aws:kms" && r.bucket_key_enabled])
    error_message = "the bucket is SSE-KMS with the given key and an S3 Bucket Key"
  }

  assert {
    condition     = output.kms_key_arn == var.kms_key_arn && output.kms_key_policy_json != null
    error_message = "the key handed on to the queues, functions and runners is the given one, with the policy it must allow"
  }
}

