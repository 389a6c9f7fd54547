################################################################################
# Functions
################################################################################

variable "create" {
  description = "Whether to create the Lambda functions, their roles, log groups and event source mappings."
  type        = bool
  default     = true
}

variable "name_prefix" {
  description = "Function names are `<name_prefix>-splitter`, `-completion`, `-dead-letter`, `-upload-dead-letter` and `-completion-dead-letter`."
  type        = string
}

variable "package_path" {
  description = "Path of the Lambda zip built by `make lambda-package` (handlers/, pagefleet/ and manylinux wheels)."
  type        = string
}

variable "runtime" {
  description = "Lambda runtime; must match the Python version the package's wheels were built for."
  type        = string
  default     = "python3.12"
}

variable "architecture" {
  description = "Lambda architecture; must match the package's wheels (x86_64 or arm64)."
  type        = string
  default     = "x86_64"

  validation {
    condition     = contains(["x86_64", "arm64"], var.architecture)
    error_message = "architecture must be x86_64 or arm64."
  }
}

variable "timeout_s" {
  description = "Function timeout in seconds; each source queue's visibility timeout must be at least this (stack.py uses 6x)."
  type        = number
  default     = 60
}

variable "memory_mb" {
  description = "Memory (128-10240 MB) per function: splitter, completion, dead_letter, upload_dead_letter, completion_dead_letter. The splitter holds a whole PDF; the completion dead-letter function may assemble a job once more."
  type        = map(number)
  default = {
    splitter               = 2048
    completion             = 1024
    dead_letter            = 256
    upload_dead_letter     = 256
    completion_dead_letter = 1024
  }
}

variable "reserved_concurrency" {
  description = "Reserved concurrent executions per function (-1: none). A reservation must leave 100 of the account's concurrency unreserved, which a new account's quota does not allow."
  type        = map(number)
  nullable    = false
  default = {
    splitter               = -1
    completion             = -1
    dead_letter            = -1
    upload_dead_letter     = -1
    completion_dead_letter = -1
  }
}

variable "maximum_concurrency" {
  description = "Most concurrent invocations per function's SQS event source mapping (2 to 1000). Caps what a burst of uploads can do to S3 and the account's Lambda quota, reserving nothing."
  type        = map(number)
  nullable    = false
  default = {
    splitter               = 10
    completion             = 5
    dead_letter            = 2
    upload_dead_letter     = 2
    completion_dead_letter = 2
  }

  validation {
    condition     = alltrue([for n in values(var.maximum_concurrency) : n >= 2 && n <= 1000])
    error_message = "maximum_concurrency (lambda_maximum_concurrency): an SQS event source mapping's maximum concurrency is 2 to 1000."
  }
}

variable "batch_size" {
  description = "SQS messages per invocation per function. One PDF per splitter invocation keeps its memory and time bounded. The root module passes stack.json's (pagefleet/stack.py's BATCH_SIZES, which the embedded stack uses too)."
  type        = map(number)
  default = {
    splitter               = 1
    completion             = 10
    dead_letter            = 10
    upload_dead_letter     = 10
    completion_dead_letter = 10
  }
}

variable "event_source_mapping_enabled" {
  description = "Whether the SQS event source mappings poll. Off against a moto server, which would try to run the functions in Docker."
  type        = bool
  default     = true
}

variable "tracing_mode" {
  description = "X-Ray tracing mode: PassThrough or Active."
  type        = string
  default     = "PassThrough"
}

variable "log_retention_days" {
  description = "Retention of the functions' log groups, in days."
  type        = number
  default     = 30
}

variable "environment" {
  description = "PAGEFLEET_* settings (and POWERTOOLS_*) for every function, besides the bucket, queue prefix and region this module sets."
  type        = map(string)
  default     = {}
}

################################################################################
# IAM
################################################################################

variable "iam_role_path" {
  description = "Path of the IAM roles this module creates, e.g. \"/pagefleet/\"; null: \"/\"."
  type        = string
  default     = null
}

variable "iam_role_permissions_boundary" {
  description = "ARN of a managed policy set as the permissions boundary of every IAM role this module creates: a role may then do only what both its own policy and the boundary allow. null: none."
  type        = string
  default     = null
}

################################################################################
# What the functions use
################################################################################

variable "bucket_name" {
  description = "The pagefleet bucket (PAGEFLEET_BUCKET)."
  type        = string
}

variable "bucket_arn" {
  description = "ARN of the pagefleet bucket."
  type        = string
}

variable "queue_prefix" {
  description = "Prefix of the queue names (PAGEFLEET_QUEUE_PREFIX)."
  type        = string
}

variable "queue_arns" {
  description = "Source queue ARNs by role: ingest, chunks, completion."
  type        = map(string)
}

variable "dead_letter_queue_arns" {
  description = "DLQ ARNs by role of their source queue, each feeding a function: chunks -> dead_letter, ingest -> upload_dead_letter, completion -> completion_dead_letter."
  type        = map(string)
}

variable "job_event_bus_name" {
  description = "EventBridge bus (in this account and region) the functions that end jobs (completion, completion_dead_letter) put one event per finished job on (PAGEFLEET_EVENT_BUS; events:PutEvents on this bus alone); null puts none."
  type        = string
  default     = null
}

variable "webhook_url" {
  description = "http(s) URL those functions POST each job-end event's detail to (PAGEFLEET_WEBHOOK_URL); null posts none. Sensitive: such URLs often carry a token."
  type        = string
  default     = null
  sensitive   = true
}

variable "kms_key_arn" {
  description = "KMS key of the bucket, the queues, the log groups and the functions' environment."
  type        = string
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = {}
}
