data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}
data "aws_region" "current" {}

locals {
  account_id = data.aws_caller_identity.current.account_id
  partition  = data.aws_partition.current.partition
  region     = data.aws_region.current.name

  # A key of the caller's (kms_key_arn) or the module's own.
  create_kms_key = var.create && var.kms_key_arn == null
  kms_key_arn    = var.kms_key_arn != null ? var.kms_key_arn : try(aws_kms_key.this[0].arn, null)
}

################################################################################
# Encryption key: the bucket, the queues, the Lambda environments and the log groups
################################################################################

# The module's key's policy, and with kms_key_arn what that key's policy must allow (the
# kms_key_policy_json output): the services below act on the key under their own principals,
# which no IAM policy of this account can grant.
data "aws_iam_policy_document" "kms" {
  count = var.create ? 1 : 0

  # In a key policy "Resource": "*" means this key and nothing else; the checks below read it as any resource.
  # checkov:skip=CKV_AWS_109:Key policy: "*" is this key; administration is delegated to IAM in this account only.
  # checkov:skip=CKV_AWS_111:Key policy: "*" is this key; writers are the account's IAM principals and the service principals AWS documents for S3 notifications, CloudWatch Logs and (with an alarm topic) CloudWatch alarms.
  # checkov:skip=CKV_AWS_356:Key policy: "*" is this key, the only resource a key policy can name.

  # Delegates use of the key to IAM policies in this account, so each role's own policy
  # says what it may do.
  statement {
    sid       = "AccountAdministersThroughIam"
    actions   = ["kms:*"]
    resources = ["*"]

    principals {
      type        = "AWS"
      identifiers = ["arn:${local.partition}:iam::${local.account_id}:root"]
    }
  }

  # S3 encrypts the event notifications it sends to the KMS-encrypted queues. This is the
  # statement AWS documents for S3 event notifications to an encrypted SQS queue (S3 user
  # guide, "Enabling and configuring event notifications", key policy for SNS/SQS), word for
  # word: no condition. S3 validates the notification configuration against the key when it is
  # set, and AWS does not document that this call carries aws:SourceAccount or aws:SourceArn;
  # a condition on a key it lacks fails that validation and the bucket notification at apply
  # (moto checks no key policy, so no test here could catch it). Who may make S3 send to the
  # queues is limited by the queue policies (aws:SourceArn = this bucket, modules/queues).
  statement {
    sid       = "S3NotificationsToEncryptedQueues"
    actions   = ["kms:GenerateDataKey", "kms:Decrypt"]
    resources = ["*"]

    principals {
      type        = "Service"
      identifiers = ["s3.amazonaws.com"]
    }
  }

  # CloudWatch alarms publish to the alarm topic, encrypted with this key: AWS's documented
  # statement for CloudWatch and encrypted SNS topics (SNS developer guide, "Enable
  # compatibility between event sources from AWS services and encrypted topics"), unconditioned
  # for the same reason as S3's above. Without it alarms fire and their notifications vanish.
  dynamic "statement" {
    for_each = var.allow_cloudwatch_alarms ? [true] : []

    content {
      sid       = "CloudWatchAlarmsToEncryptedTopic"
      actions   = ["kms:Decrypt", "kms:GenerateDataKey*"]
      resources = ["*"]

      principals {
        type        = "Service"
        identifiers = ["cloudwatch.amazonaws.com"]
      }
    }
  }

  # CloudWatch Logs encrypts this account's log groups with the key.
  statement {
    sid       = "CloudWatchLogs"
    actions   = ["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"]
    resources = ["*"]

    principals {
      type        = "Service"
      identifiers = ["logs.${local.region}.amazonaws.com"]
    }

    condition {
      test     = "ArnLike"
      variable = "kms:EncryptionContext:aws:logs:arn"
      values   = ["arn:${local.partition}:logs:${local.region}:${local.account_id}:log-group:*"]
    }
  }
}

resource "aws_kms_key" "this" {
  count = local.create_kms_key ? 1 : 0

  description             = "pagefleet ${var.bucket_name}: bucket, queues, Lambda environment and logs"
  enable_key_rotation     = true
  deletion_window_in_days = var.kms_deletion_window_days
  policy                  = data.aws_iam_policy_document.kms[0].json

  tags = var.tags
}

resource "aws_kms_alias" "this" {
  count = local.create_kms_key ? 1 : 0

  name          = "alias/${var.bucket_name}"
  target_key_id = aws_kms_key.this[0].key_id
}

################################################################################
# Bucket
################################################################################

resource "aws_s3_bucket" "this" {
  count = var.create ? 1 : 0

  # checkov:skip=CKV_AWS_144:Cross-region replication doubles storage for intermediate data; inbox/ stays with its owner and outbox/ can be rebuilt from it.
  # checkov:skip=CKV_AWS_18:Access logging is opt-in through var.access_log_bucket (a separate log bucket this module cannot own).
  bucket        = var.bucket_name
  force_destroy = var.force_destroy

  tags = var.tags
}

resource "aws_s3_bucket_logging" "this" {
  count = var.create && var.access_log_bucket != null ? 1 : 0

  bucket        = aws_s3_bucket.this[0].id
  target_bucket = var.access_log_bucket
  target_prefix = "s3/${var.bucket_name}/"
}

resource "aws_s3_bucket_ownership_controls" "this" {
  count = var.create ? 1 : 0

  bucket = aws_s3_bucket.this[0].id

  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_public_access_block" "this" {
  count = var.create ? 1 : 0

  bucket                  = aws_s3_bucket.this[0].id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_versioning" "this" {
  count = var.create ? 1 : 0

  bucket = aws_s3_bucket.this[0].id

  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "this" {
  count = var.create ? 1 : 0

  bucket = aws_s3_bucket.this[0].id

  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = local.kms_key_arn
    }
    # One data key per bucket instead of a KMS call per chunk object. The encryption context
    # is then the bucket's ARN, not each object's: a kms_key_arn key's policy conditions on
    # kms:EncryptionContext:aws:s3:arn must name the bucket.
    bucket_key_enabled = true
  }
}

data "aws_iam_policy_document" "bucket" {
  count = var.create && var.deny_insecure_transport ? 1 : 0

  statement {
    sid       = "DenyInsecureTransport"
    effect    = "Deny"
    actions   = ["s3:*"]
    resources = [aws_s3_bucket.this[0].arn, "${aws_s3_bucket.this[0].arn}/*"]

    principals {
      type        = "*"
      identifiers = ["*"]
    }

    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }
}

resource "aws_s3_bucket_policy" "this" {
  count = var.create && var.deny_insecure_transport ? 1 : 0

  bucket = aws_s3_bucket.this[0].id
  policy = data.aws_iam_policy_document.bucket[0].json

  # S3 rejects a bucket policy while the public access block is being changed.
  depends_on = [aws_s3_bucket_public_access_block.this]
}

resource "aws_s3_bucket_lifecycle_configuration" "this" {
  count = var.create ? 1 : 0

  bucket = aws_s3_bucket.this[0].id

  rule {
    id     = "expire-jobs"
    status = "Enabled"

    filter {
      prefix = "jobs/"
    }

    expiration {
      days = var.jobs_expiration_days
    }

    # Intermediate objects need no history.
    noncurrent_version_expiration {
      noncurrent_days = 1
    }
  }

  rule {
    id     = "all-objects"
    status = "Enabled"

    filter {
      prefix = ""
    }

    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }

    noncurrent_version_expiration {
      noncurrent_days = var.noncurrent_version_expiration_days
    }

    expiration {
      expired_object_delete_marker = true
    }
  }

  depends_on = [aws_s3_bucket_versioning.this]
}

################################################################################
# Notifications: inbox objects -> ingest queue, chunk results -> completion queue
################################################################################

resource "aws_s3_bucket_notification" "this" {
  count = var.create && length(var.notifications) > 0 ? 1 : 0

  bucket = aws_s3_bucket.this[0].id

  dynamic "queue" {
    for_each = var.notifications

    content {
      id            = queue.value.id
      queue_arn     = queue.value.queue_arn
      events        = queue.value.events
      filter_prefix = queue.value.filter_prefix
      filter_suffix = queue.value.filter_suffix
    }
  }
}
