################################################################################
# Deployment
################################################################################

variable "name" {
  description = "Name of the deployment: prefix of the queues (PAGEFLEET_QUEUE_PREFIX), functions, cluster and alarms."
  type        = string
  default     = "pagefleet"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,30}$", var.name))
    error_message = "name must be 2-31 lowercase letters, digits or hyphens, starting with a letter."
  }
}

variable "region" {
  description = "AWS region of everything (PAGEFLEET_REGION)."
  type        = string
  default     = "us-east-1"
}

variable "bucket_name" {
  description = "Bucket name (PAGEFLEET_BUCKET); null gives `<name>-<account id>-<region>`."
  type        = string
  default     = null
}

variable "endpoint_url" {
  description = "An AWS-compatible endpoint for every service (a moto server in the tests; PAGEFLEET_ENDPOINT_URL); null means AWS."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags added to every resource."
  type        = map(string)
  default     = {}
}

################################################################################
# Switches
################################################################################

variable "create_runners" {
  description = "Whether to create the GPU runner fleet (ECR, ECS, instances). Off for the moto apply."
  type        = bool
  default     = true
}

variable "create_autoscaling" {
  description = "Whether to autoscale the runner service (needs create_runners). Off for the moto apply, which lacks Application Auto Scaling tagging."
  type        = bool
  default     = true
}

variable "create_alarms" {
  description = "Whether to create the DLQ and oldest-chunk alarms."
  type        = bool
  default     = true
}

variable "event_source_mapping_enabled" {
  description = "Whether the Lambdas' SQS event source mappings poll. Off against moto, which would run the functions in Docker."
  type        = bool
  default     = true
}

################################################################################
# Storage
################################################################################

variable "jobs_expiration_days" {
  description = "Days after which the intermediate objects under jobs/ expire."
  type        = number
  default     = 7
}

variable "force_destroy" {
  description = "Let `terraform destroy` delete the bucket with its objects. Keep false for real data."
  type        = bool
  default     = false
}

variable "s3_deny_insecure_transport" {
  description = "Attach the TLS-only bucket policy. Off only against moto 5.2, whose policy evaluation denies every request when a Deny condition is unmet."
  type        = bool
  default     = true
}

variable "access_log_bucket" {
  description = "Existing bucket for S3 server access logs; null turns access logging off."
  type        = string
  default     = null
}

################################################################################
# Pipeline settings (null: the default of pagefleet/settings.py, via stack.json)
################################################################################

variable "chunk_pages" {
  description = "Target pages per chunk (PAGEFLEET_CHUNK_PAGES)."
  type        = number
  default     = null
}

variable "visibility_timeout_s" {
  description = "Chunk lease in seconds: how soon a dead runner's chunk is converted again; the heartbeat extends it (PAGEFLEET_VISIBILITY_TIMEOUT_S, the chunks queue's visibility timeout)."
  type        = number
  default     = null
}

variable "convert_timeout_s" {
  description = "A chunk conversion running longer fails (PAGEFLEET_CONVERT_TIMEOUT_S)."
  type        = number
  default     = null
}

variable "drain_timeout_s" {
  description = "On SIGTERM (scale-in, Spot notice) a runner finishes held chunks for this long (PAGEFLEET_DRAIN_TIMEOUT_S); the container's stopTimeout is this plus 15 s."
  type        = number
  default     = null
}

################################################################################
# Functions
################################################################################

variable "lambda_package_path" {
  description = "The Lambda zip from `make lambda-package`; null means ../build/lambda.zip."
  type        = string
  default     = null
}

variable "lambda_reserved_concurrency" {
  description = "Reserved concurrency per function (splitter, completion, dead_letter); -1 leaves one unreserved (accounts with a small concurrency quota need that)."
  type        = map(number)
  default = {
    splitter    = 10
    completion  = 5
    dead_letter = 2
  }
}

variable "log_retention_days" {
  description = "Retention of all log groups, in days."
  type        = number
  default     = 30
}

################################################################################
# Runners
################################################################################

variable "vpc_id" {
  description = "VPC of the runner instances (needed with create_runners)."
  type        = string
  default     = null
}

variable "subnet_ids" {
  description = "Subnets of the runner instances (needed with create_runners)."
  type        = list(string)
  default     = []
}

variable "gpu_instance_types" {
  description = "GPU instance types for the runners, one GPU each, in order of preference."
  type        = list(string)
  default     = ["g6.xlarge", "g5.xlarge", "g6e.xlarge"]
}

variable "on_demand_base_capacity" {
  description = "Runner instances that are always on-demand."
  type        = number
  default     = 0
}

variable "on_demand_percentage_above_base_capacity" {
  description = "Percentage of on-demand runner instances above the base; the rest is Spot."
  type        = number
  default     = 0
}

variable "workers_per_gpu" {
  description = "Converter worker processes per GPU, sharing it through MPS (PAGEFLEET_WORKERS). About VRAM GiB / 7 for marker."
  type        = number
  default     = 3
}

variable "max_runners" {
  description = "Most runner tasks (and GPU instances) at once; null takes the scaling policy's (stack.json, from pagefleet/scaling.py)."
  type        = number
  default     = null
}

variable "runner_image_tag" {
  description = "Tag of the runner image pushed to the ECR repository."
  type        = string
  default     = "latest"
}

variable "runner_memory_mb" {
  description = "Memory reserved for a runner task, MiB."
  type        = number
  default     = 12288
}

variable "vllm_image" {
  description = "Image of the runners' vLLM sidecar serving surya's OCR model (datalab-to/surya-ocr-2)."
  type        = string
  default     = "vllm/vllm-openai:v0.20.1"
}

variable "vllm_gpu_memory_utilization" {
  description = "Share of GPU memory the vLLM sidecar takes (--gpu-memory-utilization); the rest is for the runner's layout and OCR-error servers and workers."
  type        = number
  default     = 0.65
}

variable "vllm_gpu_type" {
  description = "surya's VLLM_GPU_TYPE (l4, a10, l40s, h100, ...) sizing the sidecar and the workers' request concurrency; null derives it from gpu_instance_types (the smallest GPU)."
  type        = string
  default     = null
}

################################################################################
# Autoscaling and alarms
################################################################################

variable "acceptable_latency_s" {
  description = "How long the chunks outstanding per task may take to clear; with seconds_per_chunk it sets the backlog per task the runners scale to. Null takes the scaling policy's (stack.json, from pagefleet/scaling.py)."
  type        = number
  default     = null
}

variable "seconds_per_chunk" {
  description = "Average seconds one runner task (one GPU, all its workers) needs per chunk of chunk_pages pages. Null takes the scaling policy's (stack.json, from pagefleet/scaling.py)."
  type        = number
  default     = null
}

variable "oldest_chunk_age_threshold_s" {
  description = "Age of the oldest waiting chunk that raises the alarm, in seconds."
  type        = number
  default     = 1800
}

variable "alarm_actions" {
  description = "ARNs (e.g. an SNS topic) notified by the alarms."
  type        = list(string)
  default     = []
}
