################################################################################
# Runners
################################################################################

variable "create" {
  description = "Whether to create the runner fleet (ECR, ECS cluster, task definition, service, and with kind gpu the instances)."
  type        = bool
  default     = true
}

variable "kind" {
  description = "What the runners run on: gpu (marker-pdf on one-GPU EC2 instances of instance_types, with the vLLM sidecar and MPS) or cpu (the text-layer converter on Fargate, cpu_task.json's size: no GPU, no AMI, no instances to launch)."
  type        = string
  default     = "gpu"

  validation {
    condition     = contains(["gpu", "cpu"], var.kind)
    error_message = "kind must be \"gpu\" (marker-pdf on GPU instances) or \"cpu\" (the text-layer converter on Fargate)."
  }
}

variable "create_service_linked_role" {
  description = "Create ECS's service-linked role (AWSServiceRoleForECS). An account that has never used ECS lacks it, and the capacity provider cannot be created without it; an account that has it refuses a second one, so set true only where `aws iam get-role --role-name AWSServiceRoleForECS` finds none."
  type        = bool
  default     = false
}

variable "name" {
  description = "Name of the cluster, service, repository and instance resources."
  type        = string
}

variable "vpc_id" {
  description = "VPC of the runner instances (needed with create)."
  type        = string
  default     = null

  validation {
    condition     = !var.create || can(regex("^vpc-[0-9a-f]+$", var.vpc_id))
    error_message = "The runners need a VPC: set vpc_id to the VPC of subnet_ids (\"vpc-...\"), or create = false."
  }
}

variable "subnet_ids" {
  description = "Subnets of the runner instances (private subnets with a NAT gateway or VPC endpoints for ECR, ECS, S3, SQS, logs)."
  type        = list(string)
  default     = []

  validation {
    condition     = !var.create || (length(var.subnet_ids) > 0 && alltrue([for s in var.subnet_ids : can(regex("^subnet-[0-9a-f]+$", s))]))
    error_message = "The runners need at least one subnet: set subnet_ids to subnets (\"subnet-...\") of vpc_id, or create = false."
  }
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
  # The .2xlarge of each family: the smallest whose CPUs keep its GPU fed. A marker worker spends
  # 0.2 CPU s on a text page and 0.75 on a scan (bench/results/2026-12-05-marker-cpu); the
  # runner keeps 2 of the physical cores for the model servers, so an .xlarge (2 cores) leaves
  # its GPU waiting on one worker and a .2xlarge (4 cores) runs 2 workers (mps/README.md).
  default = ["g6.2xlarge", "g5.2xlarge", "g6e.2xlarge"]

  validation {
    condition     = length(var.instance_types) > 0
    error_message = "At least one instance type is needed."
  }

  validation {
    condition     = alltrue([for t in var.instance_types : lookup(local.gpus_per_instance_type, t, 1) == 1])
    error_message = "Multi-GPU instance types (${join(", ", [for t in var.instance_types : "${t}: ${lookup(local.gpus_per_instance_type, t, 1)} GPUs" if lookup(local.gpus_per_instance_type, t, 1) != 1])}) are refused: a runner task holds one GPU and its vLLM sidecar and model servers sit on it, one task per instance, so the other GPUs would be paid for and never used. Use one-GPU types: ${local.one_gpu_types_text}."
  }

  # The sidecar serves surya's model with --dtype bfloat16, which vLLM refuses on a compute
  # capability below 8.0; g4dn's T4 is 7.5.
  validation {
    condition     = !anytrue([for t in var.instance_types : startswith(t, "g4dn.")])
    error_message = "g4dn instance types (${join(", ", [for t in var.instance_types : t if startswith(t, "g4dn.")])}) are refused: their T4 GPU has no bfloat16, and the vLLM sidecar serves surya's OCR model in bfloat16 as surya does. Use g6, g5 or g6e."
  }

  validation {
    condition     = alltrue([for t in var.instance_types : contains(keys(local.gpus_per_instance_type), t)])
    error_message = "Instance types not known to have one NVIDIA GPU: ${join(", ", [for t in var.instance_types : t if !contains(keys(local.gpus_per_instance_type), t)])}. The runners place one task on each instance and size it for one GPU. Use one-GPU types (${local.one_gpu_types_text}), or add the type with its GPU count to modules/runners/gpu_instance_types.json."
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
  description = "Pipe directory of the instance's one MPS control daemon, mounted at the same path into both containers (PAGEFLEET_MPS_DIR): the AMI's nvidia-mps.service's pipe directory (/run/mps-ecs) is bind-mounted here where the AMI has that service, else mps/'s daemon listens here. Never CUDA's default /tmp/nvidia-mps."
  type        = string
  default     = "/run/pagefleet-mps"

  # A CUDA client told nothing looks in /tmp/nvidia-mps: a daemon there would be joined by a
  # process running with PAGEFLEET_MPS=off too.
  validation {
    condition     = startswith(var.mps_pipe_directory, "/") && trimsuffix(var.mps_pipe_directory, "/") != "/tmp/nvidia-mps"
    error_message = "mps_pipe_directory must be an absolute path other than CUDA's default pipe directory /tmp/nvidia-mps, where every CUDA process finds the daemon whether or not it was told to join it (PAGEFLEET_MPS=off would not be off); the default is /run/pagefleet-mps."
  }
}

################################################################################
# Task
################################################################################

variable "image_tag" {
  description = "Tag of the runner image in the ECR repository (`docker/runner.Dockerfile`), as `make runner-image` pushed it: the git revision. Required to create the task definition; never `latest` (the repository's tags are immutable)."
  type        = string
  default     = null

  validation {
    condition     = var.image_tag == null || (lower(coalesce(var.image_tag, "-")) != "latest" && can(regex("^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$", var.image_tag)))
    error_message = "image_tag must be the tag of one pushed image, e.g. the git revision `make runner-image` pushes, and never \"latest\": the repository's tags are immutable, so a second \"latest\" cannot be pushed, and a moving tag would hide which image a task runs."
  }
}

variable "force_delete" {
  description = "Let `terraform destroy` delete the image repositories while they still hold images. Off by default: a destroy then stops at the repositories until they are emptied."
  type        = bool
  default     = false
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

  # As the runner refuses at start (pagefleet/settings.py), where both are given: a lease that
  # lapses before its heartbeat lets a second runner convert the chunk again.
  validation {
    condition     = 2 * tonumber(lookup(var.environment, "PAGEFLEET_HEARTBEAT_S", "0")) <= tonumber(lookup(var.environment, "PAGEFLEET_VISIBILITY_TIMEOUT_S", "43200"))
    error_message = "PAGEFLEET_HEARTBEAT_S must be at most half of PAGEFLEET_VISIBILITY_TIMEOUT_S, or a chunk's lease lapses before the runner extends it."
  }
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

################################################################################
# vLLM sidecar (surya's OCR model; mps/README.md, "The ECS task")
################################################################################

variable "vllm_image" {
  description = "Image of the vLLM sidecar serving datalab-to/surya-ocr-2: the one surya itself runs, or a copy with the weights baked in (then set HF_HUB_OFFLINE=1 in vllm_environment). An ECR image outside this module's repository needs the execution role to allow pulling it."
  type        = string
  default     = "vllm/vllm-openai:v0.20.1"
}

variable "vllm_gpu_memory_utilization" {
  description = "vLLM's --gpu-memory-utilization: its share of GPU memory (weights and KV cache). Below surya's 0.85 so the layout and OCR-error servers and the workers' CUDA contexts fit beside it; MPS does not partition memory."
  type        = number
  default     = 0.65

  validation {
    condition     = var.vllm_gpu_memory_utilization > 0 && var.vllm_gpu_memory_utilization <= 0.85
    error_message = "vllm_gpu_memory_utilization must be in (0, 0.85]: above surya's own 0.85 the runner's model servers have no room."
  }
}

variable "vllm_gpu_type" {
  validation {
    condition     = var.vllm_gpu_type != "t4"
    error_message = "vllm_gpu_type t4 is refused: the T4 has no bfloat16, which the vLLM sidecar serves surya's model in."
  }

  description = "surya's VLLM_GPU_TYPE (a10, l4, l40s, a100, a100-80, h100, h200, b200, ...; not t4, which has no bfloat16): sizes the sidecar's --max-num-seqs/--max-num-batched-tokens and the runner's request concurrency (PAGEFLEET_MARKER_VLLM_GPU_TYPE). null derives it from instance_types: the smallest GPU among them."
  type        = string
  default     = null
}

variable "vllm_extra_args" {
  description = "Arguments appended to the sidecar's vllm serve command line (after surya's own, so they override them)."
  type        = list(string)
  default     = []
}

variable "vllm_image_has_weights" {
  description = "Whether vllm_image holds datalab-to/surya-ocr-2's weights in its Hugging Face cache (a copy built with them, not the public image): then the sidecar runs with HF_HUB_OFFLINE=1 and never reaches Hugging Face, else it downloads them (several GB) on each new instance. The weights' licence is a modified OpenRAIL-M (terraform/README.md)."
  type        = bool
  default     = false
}

variable "vllm_environment" {
  description = "Extra environment of the sidecar (e.g. HF_HUB_OFFLINE=1 when the image holds the weights)."
  type        = map(string)
  default     = {}
}

variable "vllm_memory_mb" {
  description = "Memory reserved for the sidecar (soft limit, MiB); with task_memory_mb it must fit the smallest instance type."
  type        = number
  default     = 2048
}

variable "vllm_cache_host_path" {
  description = "Instance folder for the sidecar's Hugging Face, vLLM and compile caches (its HOME), kept across task replacements; user data creates it for uid 1000."
  type        = string
  default     = "/var/lib/pagefleet/vllm-cache"
}

variable "vllm_cache_container_path" {
  description = "Where vllm_cache_host_path is mounted in the sidecar (its HOME)."
  type        = string
  default     = "/cache"
}

################################################################################
# IAM
################################################################################

variable "iam_role_path" {
  description = "Path of the IAM roles this module creates (and of the instance profile), e.g. \"/pagefleet/\"; null: \"/\"."
  type        = string
  default     = null
}

variable "iam_role_permissions_boundary" {
  description = "ARN of a managed policy set as the permissions boundary of every IAM role this module creates: a role may then do only what both its own policy and the boundary allow. null: none."
  type        = string
  default     = null
}
