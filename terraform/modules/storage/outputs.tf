output "bucket_name" {
  description = "Name of the bucket (PAGEFLEET_BUCKET)."
  value       = try(aws_s3_bucket.this[0].bucket, null)
}

output "bucket_arn" {
  description = "ARN of the bucket."
  value       = try(aws_s3_bucket.this[0].arn, null)
}

output "bucket_arn_static" {
  description = "ARN of the bucket, built from its name so queue policies can use it before the bucket exists."
  value       = "arn:${data.aws_partition.current.partition}:s3:::${var.bucket_name}"
}

output "kms_key_arn" {
  description = "ARN of the KMS key of the bucket, the queues, the Lambda environments and the log groups: kms_key_arn, or the module's own."
  value       = local.kms_key_arn
}

output "kms_key_policy_json" {
  description = "The key policy the deployment needs: the module's own key's, or what the policy of the kms_key_arn key must allow (the account's IAM policies, S3 notifications to the encrypted queues, CloudWatch Logs, CloudWatch alarms to an encrypted topic)."
  value       = try(data.aws_iam_policy_document.kms[0].json, null)
}

output "bucket_notification_id" {
  description = "ID of the bucket notification configuration (null when none is set)."
  value       = try(aws_s3_bucket_notification.this[0].id, null)
}

output "bucket_notifications" {
  description = "The S3 event notification rules set on the bucket: id, queue_arn, events, filter_prefix, filter_suffix."
  value       = var.create ? var.notifications : []
}
