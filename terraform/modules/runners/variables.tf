################################################################################
# Runners
################################################################################

variable "create" {
  description = "Whether to create the GPU runner fleet (ECR, ECS cluster, instances, task definition, service)."
  type        = bool
  default     = true
}

variable "name" {
  description = "Name of the cluster, service, repository and instance resources."
  type        = string
}

variable "vpc_id" {
  description = "VPC of the runner instances."
  type        = string
  default     = null
}

variable "subnet_ids" {
  description = "Subnets of the runner instances (private subnets with a NAT gateway or VPC endpoints for ECR, ECS, S3, SQS, logs)."
  type        = list(string)
  default     = []
}

################################################################################
# Instances
################################################################################

variable "ami_ssm_parameter" {
  description = "SSM parameter holding the ECS GPU-optimised AMI ID."
  type        = string
  default     = "/aws/service/ecs/optimized-ami/amazon-linux-2023/gpu/recommended/image_id"
}

variable "instance_types" {
  description = "GPU instance types the auto scaling group may launch, in order of preference (one GPU each keeps the per-task scaling math exact)."
  type        = list(string)
  default     = ["g6.xlarge", "g5.xlarge", "g6e.xlarge"]

  validation {
    condition     = length(var.instance_types) > 0
    error_message = "At least one instance type is needed."
  }
}

variable "on_demand_base_capacity" {
  description = "Instances that are always on-demand before any Spot is used."
  type        = number
  default     = 0
}

variable "on_demand_percentage_above_base_capacity" {
  description = "Percentage (0-100) of on-demand instances above the base; the rest is Spot (chunks survive interruption: their messages return to the queue)."
  type        = number
  default     = 0
}

variable "max_instances" {
  description = "Upper bound of the auto scaling group."
  type        = number
  default     = 4
}

variable "root_volume_size_gb" {
  description = "Root volume size; the runner image with CUDA torch and models is large."
  type        = number
  default     = 100
}

variable "mps_dir" {
  description = "Folder holding common.sh, start_mps.sh, stop_mps.sh, check_mps.sh and pagefleet-mps.service, embedded in the instances' user data; null means the repository's mps/."
  type        = string
  default     = null
}

variable "mps_pipe_directory" {
  description = "Host folder of the MPS control daemons (<gpu-uuid>/pipe, <gpu-uuid>/log), mounted into the runner containers (PAGEFLEET_MPS_DIR)."
  type        = string
  default     = "/tmp/nvidia-mps"
}

################################################################################
# Task
################################################################################

variable "image_tag" {
  description = "Tag of the runner image in the ECR repository (`docker/runner.Dockerfile`)."
  type        = string
  default     = "latest"
}

variable "task_memory_mb" {
  description = "Memory reserved for a runner task (soft limit, MiB)."
  type        = number
  default     = 12288
}

variable "stop_timeout_s" {
  description = "Seconds between SIGTERM and SIGKILL for a runner; the drain timeout plus a margin."
  type        = number
  default     = 40
}

variable "environment" {
  description = "PAGEFLEET_* settings of the runner (converter, workers, timeouts, bucket, queue prefix, region)."
  type        = map(string)
  default     = {}
}

variable "log_retention_days" {
  description = "Retention of the runner log group, in days."
  type        = number
  default     = 30
}

################################################################################
# What the runners use
################################################################################

variable "bucket_arn" {
  description = "ARN of the pagefleet bucket."
  type        = string
}

variable "chunks_queue_arn" {
  description = "ARN of the chunks queue."
  type        = string
}

variable "kms_key_arn" {
  description = "KMS key of the bucket, queues, image repository and logs."
  type        = string
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = {}
}
