data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}
data "aws_region" "current" {}

locals {
  queues = var.create ? var.queues : {}

  # Built from the names, so each policy is set inline when its queue is created (a separate
  # aws_sqs_queue_policy is one more wait for SQS attributes to settle).
  arn_prefix = "arn:${data.aws_partition.current.partition}:sqs:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}"
  queue_arns = { for role, _ in local.queues : role => "${local.arn_prefix}:${var.name_prefix}-${role}" }
  dlq_arns   = { for role, _ in local.queues : role => "${local.arn_prefix}:${var.name_prefix}-${role}-dlq" }
}

################################################################################
# Dead-letter queues
################################################################################

resource "aws_sqs_queue" "dlq" {
  for_each = local.queues

  name                              = "${var.name_prefix}-${each.key}-dlq"
  message_retention_seconds         = each.value.dlq_retention_s
  visibility_timeout_seconds        = each.value.dlq_visibility_timeout_s
  max_message_size                  = each.value.max_message_size
  sqs_managed_sse_enabled           = var.kms_key_arn == null ? true : null
  kms_master_key_id                 = var.kms_key_arn
  kms_data_key_reuse_period_seconds = var.kms_key_arn == null ? null : var.kms_data_key_reuse_period_s
  policy                            = data.aws_iam_policy_document.dlq[each.key].json

  tags = var.tags
}

################################################################################
# Source queues
################################################################################

resource "aws_sqs_queue" "this" {
  for_each = local.queues

  name                              = "${var.name_prefix}-${each.key}"
  visibility_timeout_seconds        = each.value.visibility_timeout_s
  message_retention_seconds         = each.value.retention_s
  max_message_size                  = each.value.max_message_size
  sqs_managed_sse_enabled           = var.kms_key_arn == null ? true : null
  kms_master_key_id                 = var.kms_key_arn
  kms_data_key_reuse_period_seconds = var.kms_key_arn == null ? null : var.kms_data_key_reuse_period_s

  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.dlq[each.key].arn
    maxReceiveCount     = each.value.max_receive_count
  })
  policy = data.aws_iam_policy_document.queue[each.key].json

  tags = var.tags
}

################################################################################
# Queue policies: TLS only; S3 notifications only from our bucket and account
################################################################################

data "aws_iam_policy_document" "queue" {
  for_each = local.queues

  statement {
    sid       = "DenyInsecureTransport"
    effect    = "Deny"
    actions   = ["sqs:*"]
    resources = [local.queue_arns[each.key]]

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

  dynamic "statement" {
    for_each = contains(var.notified_roles, each.key) ? [true] : []

    content {
      sid       = "AllowBucketNotifications"
      effect    = "Allow"
      actions   = ["sqs:SendMessage"]
      resources = [local.queue_arns[each.key]]

      principals {
        type        = "Service"
        identifiers = ["s3.amazonaws.com"]
      }

      condition {
        test     = "ArnEquals"
        variable = "aws:SourceArn"
        values   = [var.notifying_bucket_arn]
      }

      condition {
        test     = "StringEquals"
        variable = "aws:SourceAccount"
        values   = [data.aws_caller_identity.current.account_id]
      }
    }
  }
}

data "aws_iam_policy_document" "dlq" {
  for_each = local.queues

  statement {
    sid       = "DenyInsecureTransport"
    effect    = "Deny"
    actions   = ["sqs:*"]
    resources = [local.dlq_arns[each.key]]

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
