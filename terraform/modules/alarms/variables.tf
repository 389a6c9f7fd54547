################################################################################
# Alarms
################################################################################

variable "create" {
  description = "Whether to create the alarms."
  type        = bool
  default     = true
}

variable "name" {
  description = "Prefix of the alarm, rule, topic and log group names."
  type        = string
}

variable "alarm_actions" {
  description = "ARNs notified when an alarm fires and when it clears (e.g. an existing SNS topic), besides the topic this module may create."
  type        = list(string)
  default     = []
}

variable "tags" {
  description = "Tags for the alarms, rules, topic and log group."
  type        = map(string)
  default     = {}
}

################################################################################
# Queues
################################################################################

variable "dead_letter_queue_names" {
  description = "DLQ names by role of their source queue; any message arriving in one raises its alarm."
  type        = map(string)
}

variable "chunks_queue_name" {
  description = "Name of the chunks queue."
  type        = string
}

variable "oldest_chunk_age_threshold_s" {
  description = "Age in seconds of the oldest chunk message above which the chunks alarm fires (runners stuck, failing to start or too few). A cold start from zero takes minutes: keep it well above that."
  type        = number
  default     = 1800
}

variable "handler_queue_names" {
  description = "Names of the queues the functions consume, by role (ingest, completion): a message that waits there means a function's event source mapping is off, throttled or failing, and a message waits at most the queue's retention."
  type        = map(string)
  default     = {}
}

variable "oldest_message_age_threshold_s" {
  description = "Age in seconds of the oldest message of a function's queue above which its alarm fires. The functions take a message within seconds; retries of a failing one take minutes."
  type        = number
  default     = 900
}

################################################################################
# Functions
################################################################################

variable "function_names" {
  description = "Lambda function names by role; each gets an errors alarm and a throttles alarm."
  type        = map(string)
  default     = {}
}

################################################################################
# Runner tasks
################################################################################

variable "create_ecs_alarms" {
  description = "Whether to watch the runner cluster for tasks that fail to start (needs cluster_arn)."
  type        = bool
  default     = false
}

variable "cluster_arn" {
  description = "ARN of the runners' ECS cluster, matched by the task-failure event rules."
  type        = string
  default     = null

  validation {
    condition     = !var.create_ecs_alarms || var.cluster_arn != null
    error_message = "create_ecs_alarms needs cluster_arn."
  }
}

variable "log_retention_days" {
  description = "Retention of the log group that keeps the ECS task-failure events, in days."
  type        = number
  default     = 30
}

variable "log_kms_key_arn" {
  description = "KMS key of that log group; null means CloudWatch Logs' own encryption."
  type        = string
  default     = null
}

################################################################################
# Topic
################################################################################

variable "create_topic" {
  description = "Whether to create an SNS topic that every alarm notifies."
  type        = bool
  default     = false
}

variable "topic_kms_key_arn" {
  description = "KMS key of the topic; its key policy must let cloudwatch.amazonaws.com use it (kms:Decrypt, kms:GenerateDataKey*), or the notifications are lost."
  type        = string
  default     = null
}

variable "email_addresses" {
  description = "Addresses subscribed to the topic by e-mail (each must confirm the subscription AWS mails)."
  type        = list(string)
  default     = []
}
