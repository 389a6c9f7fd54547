################################################################################
# Bucket
################################################################################

variable "create" {
  description = "Whether to create the bucket, its key and its notifications."
  type        = bool
  default     = true
}

variable "bucket_name" {
  description = "Name of the bucket holding inbox/, outbox/ and jobs/ (PAGEFLEET_BUCKET)."
  type        = string
}

variable "force_destroy" {
  description = "Allow `terraform destroy` to delete a bucket that still holds objects (and their versions)."
  type        = bool
  default     = false
}

variable "jobs_expiration_days" {
  description = "Days after which objects under jobs/ (manifests, chunk PDFs, chunk results) expire."
  type        = number
  default     = 7

  validation {
    condition     = var.jobs_expiration_days >= 1
    error_message = "jobs_expiration_days must be at least 1."
  }
}

variable "noncurrent_version_expiration_days" {
  description = "Days a replaced or deleted object version is kept (versioning protects inbox/ and outbox/ from mistakes)."
  type        = number
  default     = 30
}

variable "deny_insecure_transport" {
  description = "Attach the bucket policy that denies requests without TLS. Off only for moto 5.2, which reads any unmet Deny condition as a deny of every request."
  type        = bool
  default     = true
}

variable "access_log_bucket" {
  description = "Existing bucket that receives S3 server access logs; null turns access logging off."
  type        = string
  default     = null
}

################################################################################
# Encryption key
################################################################################

variable "kms_key_arn" {
  description = "ARN of an existing KMS key (not an alias: IAM policies name keys by key ARN) for the bucket's SSE-KMS and, through the kms_key_arn output, the queues, the Lambda environments and the log groups; null creates the module's own. Its key policy must allow what kms_key_policy_json holds."
  type        = string
  default     = null
}

variable "kms_deletion_window_days" {
  description = "Waiting period (7-30 days) before the KMS key is deleted after `terraform destroy`."
  type        = number
  default     = 30
}

variable "allow_cloudwatch_alarms" {
  description = "Let CloudWatch alarms use the key, to publish to an SNS topic encrypted with it (the alarms module's topic)."
  type        = bool
  default     = false
}

################################################################################
# Notifications
################################################################################

variable "notifications" {
  description = <<-EOT
    S3 event notifications to SQS, as `pagefleet/stack.py` defines them: id, queue_arn, events,
    filter_prefix, filter_suffix (null: no suffix filter).
  EOT
  type = list(object({
    id            = string
    queue_arn     = string
    events        = list(string)
    filter_prefix = string
    filter_suffix = optional(string)
  }))
  default = []
}

variable "tags" {
  description = "Tags for the bucket and the key."
  type        = map(string)
  default     = {}
}
