################################################################################
# Queues
################################################################################

variable "create" {
  description = "Whether to create the queues."
  type        = bool
  default     = true
}

variable "name_prefix" {
  description = "Queue names are `<name_prefix>-<role>` and `<name_prefix>-<role>-dlq` (PAGEFLEET_QUEUE_PREFIX)."
  type        = string
}

variable "queues" {
  description = <<-EOT
    Source queues by role (ingest, chunks, completion), as `pagefleet/stack.py` defines them.
    visibility_timeout_s and dlq_visibility_timeout_s: 0-43200 s; retention_s and dlq_retention_s: 60-1209600 s;
    max_message_size: 65536-262144 bytes (S3 events are up to 64 KiB); max_receive_count: deliveries before the DLQ.
  EOT
  type = map(object({
    visibility_timeout_s = number
    retention_s          = number
    max_receive_count    = number
    dlq_retention_s      = number
    max_message_size     = number
    # A DLQ that feeds a Lambda (the chunks DLQ) needs at least the function timeout.
    dlq_visibility_timeout_s = number
  }))

  validation {
    condition     = alltrue([for q in values(var.queues) : q.dlq_retention_s >= q.retention_s && q.dlq_retention_s <= 1209600])
    error_message = "A DLQ must keep messages at least as long as its source queue (a DLQ counts a message's age from its first enqueue), within SQS's 1209600 s."
  }

  validation {
    condition     = alltrue([for q in values(var.queues) : q.max_message_size >= 65536 && q.max_message_size <= 262144])
    error_message = "max_message_size must hold a 64 KiB S3 event and stay within the provider's 256 KiB cap."
  }

  validation {
    condition     = alltrue([for q in values(var.queues) : q.max_receive_count >= 1 && q.visibility_timeout_s >= 0 && q.visibility_timeout_s <= 43200])
    error_message = "max_receive_count must be >= 1 and visibility_timeout_s within 0-43200."
  }
}

variable "kms_key_arn" {
  description = "KMS key that encrypts the queues; null uses SQS-managed encryption (SSE-SQS)."
  type        = string
  default     = null
}

variable "kms_data_key_reuse_period_s" {
  description = "How long SQS reuses a data key before calling KMS again (60-86400 s)."
  type        = number
  default     = 300
}

variable "notifying_bucket_arn" {
  description = "The bucket allowed to send S3 event notifications to the queues in `notified_roles`."
  type        = string
}

variable "notified_roles" {
  description = "Roles of the queues that receive S3 event notifications."
  type        = set(string)
  default     = ["ingest", "completion"]
}

variable "tags" {
  description = "Tags for every queue."
  type        = map(string)
  default     = {}
}
