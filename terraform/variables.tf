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

  # IAM role names, global to the account, are <name>-<region>-<role>: 64 characters at most.
  validation {
    condition     = length("${var.name}-${var.region}-completion-dead-letter") <= 64
    error_message = "name: the IAM role names <name>-<region>-<role> (the longest role is completion-dead-letter) must fit in 64 characters; use a shorter name."
  }

  # The runners' ECS capacity provider is named after the deployment, and ECS refuses capacity
  # provider names that start with aws, ecs or fargate.
  validation {
    condition     = !can(regex("^(aws|ecs|fargate)", var.name))
    error_message = "name must not start with \"aws\", \"ecs\" or \"fargate\": ECS reserves those prefixes for capacity provider names, and the runners' capacity provider is named after the deployment. Choose another name (the default is \"pagefleet\")."
  }

  # The default bucket name starts with the deployment's name, and S3 reserves these prefixes.
  validation {
    condition     = !can(regex("^(xn--|sthree-|amzn-s3-demo-)", var.name))
    error_message = "name must not start with \"xn--\", \"sthree-\" or \"amzn-s3-demo-\": S3 reserves those bucket name prefixes, and the default bucket name starts with the deployment's name. Choose another name."
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

  validation {
    condition     = var.bucket_name == null || can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.bucket_name))
    error_message = "bucket_name must be 3-63 lowercase letters, digits, dots or hyphens, starting and ending with a letter or digit (S3's naming rules), or null for <name>-<account id>-<region>."
  }

  validation {
    condition     = var.bucket_name == null || !can(regex("^(xn--|sthree-|amzn-s3-demo-)|(-s3alias|--ol-s3|\\.mrap|--x-s3|--table-s3)$", var.bucket_name))
    error_message = "bucket_name uses a prefix (xn--, sthree-, amzn-s3-demo-) or suffix (-s3alias, --ol-s3, .mrap, --x-s3, --table-s3) that S3 reserves; choose another name or leave it null."
  }
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
# IAM
################################################################################

variable "iam_role_path" {
  description = "Path of every IAM role the deployment creates (the functions', the runner task and execution roles, the instance role and its profile), e.g. \"/pagefleet/\"; null: \"/\". Not ECS's service-linked role, whose path AWS fixes."
  type        = string
  default     = null

  validation {
    condition     = var.iam_role_path == null || can(regex("^/([\\x21-\\x7E]{0,510}/)?$", var.iam_role_path))
    error_message = "iam_role_path must begin and end with a slash (\"/\" or e.g. \"/pagefleet/\"), at most 512 printable ASCII characters, or null."
  }
}

variable "iam_role_permissions_boundary" {
  description = "ARN of a managed policy set as the permissions boundary of every IAM role the deployment creates (as iam_role_path: not the service-linked role): each may then do only what its own policy and the boundary both allow, so the boundary must allow what the roles' policies grant (terraform/policies.json lists the functions' and the runner's). null: none."
  type        = string
  default     = null

  validation {
    condition     = var.iam_role_permissions_boundary == null || can(regex("^arn:aws[a-z-]*:iam::([0-9]{12}|aws):policy/", var.iam_role_permissions_boundary))
    error_message = "iam_role_permissions_boundary must be the ARN of a managed policy (arn:aws:iam::<account>:policy/<name>), or null."
  }
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
  description = "Whether to create the alarms: messages arriving in a DLQ, the oldest chunk's age, Lambda errors and throttles, runner tasks failing to start."
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

variable "kms_key_arn" {
  description = "ARN of an existing KMS key for the bucket (SSE-KMS with an S3 Bucket Key), the queues, the log groups, the functions' environment, the ECR repositories and the alarm topic; the roles get kms:Decrypt and kms:GenerateDataKey on it alone. Its key policy must allow what the kms_key_policy_json output holds (the account's IAM policies, and the S3, CloudWatch Logs and CloudWatch services). null: the deployment creates its own key, with that policy."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/[A-Za-z0-9-]+$", var.kms_key_arn))
    error_message = "kms_key_arn must be a key ARN (arn:aws:kms:<region>:<account>:key/<key id>), not an alias or a key ID: IAM policies grant use of a key by its key ARN. Or null for the deployment's own key."
  }
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
  description = "Chunk lease in seconds: how soon a dead runner's chunk is converted again; the heartbeat extends it (PAGEFLEET_VISIBILITY_TIMEOUT_S, the chunks queue's visibility timeout). At least two heartbeats (heartbeat_s), or the runner refuses to start. null takes stack.json's."
  type        = number
  default     = null

  # The runner refuses the same at start (pagefleet/settings.py): half the lease leaves a whole
  # heartbeat for an extension that is slow or retried. Refused here, a bad pair never reaches
  # a task that could not start.
  validation {
    condition     = try(coalesce(var.visibility_timeout_s, jsondecode(file("${path.module}/stack.json")).settings.visibility_timeout_s) >= 2 * coalesce(var.heartbeat_s, jsondecode(file("${path.module}/stack.json")).settings.heartbeat_s), false)
    error_message = "visibility_timeout_s (${try(coalesce(var.visibility_timeout_s, jsondecode(file("${path.module}/stack.json")).settings.visibility_timeout_s), "?")}) must be at least twice heartbeat_s (${try(coalesce(var.heartbeat_s, jsondecode(file("${path.module}/stack.json")).settings.heartbeat_s), "?")}; null takes stack.json's settings): a lease that lapses before the runner extends it lets a second runner convert the chunk. Raise visibility_timeout_s or lower heartbeat_s."
  }
}

variable "heartbeat_s" {
  description = "How often a runner extends the lease of the chunk it converts, in seconds (PAGEFLEET_HEARTBEAT_S); at most half of visibility_timeout_s. null takes stack.json's."
  type        = number
  default     = null

  validation {
    condition     = var.heartbeat_s == null || try(var.heartbeat_s > 0, false)
    error_message = "heartbeat_s must be more than 0 seconds, or null for stack.json's."
  }
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

variable "create_ecs_service_linked_role" {
  description = "Create ECS's service-linked role (AWSServiceRoleForECS) with the runners. Needed in an account that has never used ECS (the capacity provider cannot be created without it); refused where it exists, so true only where `aws iam get-role --role-name AWSServiceRoleForECS` finds none."
  type        = bool
  default     = false
}

variable "lambda_package_path" {
  description = "The Lambda zip from `make lambda-package`; null means ../build/lambda.zip."
  type        = string
  default     = null
}

variable "lambda_reserved_concurrency" {
  description = "Reserved concurrency per function (splitter, completion, dead_letter, upload_dead_letter, completion_dead_letter); null: the functions module's, -1 each, which reserves none. A reservation must leave 100 of the account's Lambda concurrency unreserved, so in a new account (a quota of 10 at first) any reservation fails the apply."
  type        = map(number)
  default     = null
}

variable "lambda_maximum_concurrency" {
  description = "Most concurrent invocations each function's SQS event source mapping makes (2 to 1000): what a burst of uploads can do to S3 and to the account's Lambda concurrency, without reserving any of it. null: the functions module's, splitter 10, completion 5, each dead-letter function 2."
  type        = map(number)
  default     = null
}

variable "job_webhook_url" {
  description = "http(s) URL that gets each finished job's event detail as a JSON POST (PAGEFLEET_WEBHOOK_URL), besides the job event bus; null posts none. Sensitive: such URLs often carry a token."
  type        = string
  default     = null
  sensitive   = true

  validation {
    condition     = var.job_webhook_url == null || can(regex("^https?://[^/?#]+", var.job_webhook_url))
    error_message = "job_webhook_url must be an http:// or https:// URL (the completion functions refuse any other at start), or null for no webhook."
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

variable "runner_kind" {
  description = "What converts the chunks. \"gpu\": marker-pdf on one-GPU EC2 instances (gpu_instance_types), with the vLLM sidecar and MPS; needs G/VT vCPU quota, which a new account lacks (raising it takes hours to days). \"cpu\": the CPU text-layer converter on Fargate (2 vCPU, 4 GiB tasks, 2 workers each): no GPU, AMI or instance quota, only the Fargate vCPU quota, so a new account converts within minutes of its first apply; text layers and OCR of scans, not marker's layout model. The same queues, scaling policy and records either way: switching is this one variable and an apply."
  type        = string
  default     = "gpu"

  validation {
    condition     = contains(["gpu", "cpu"], var.runner_kind)
    error_message = "runner_kind must be \"gpu\" (marker-pdf on GPU instances) or \"cpu\" (the text-layer converter on Fargate, for an account whose GPU quota is not there yet)."
  }
}

variable "vpc_id" {
  description = "VPC of the runner instances (needed with create_runners)."
  type        = string
  default     = null

  validation {
    condition     = !var.create_runners || can(regex("^vpc-[0-9a-f]+$", var.vpc_id))
    error_message = "create_runners is true (the default), so the GPU runners need a VPC: set vpc_id = \"vpc-...\" (the VPC of subnet_ids), or set create_runners = false to deploy the pipeline without runners."
  }
}

variable "subnet_ids" {
  description = "Subnets of the runner instances (needed with create_runners): private subnets with a NAT gateway (the vLLM sidecar downloads its model from Hugging Face on an instance's first task; VPC endpoints alone are not enough), plus an S3 gateway endpoint."
  type        = list(string)
  default     = []

  validation {
    condition     = !var.create_runners || (length(var.subnet_ids) > 0 && alltrue([for s in var.subnet_ids : can(regex("^subnet-[0-9a-f]+$", s))]))
    error_message = "create_runners is true (the default), so the GPU runners need subnets: set subnet_ids = [\"subnet-...\", ...] (private subnets of vpc_id, one per Availability Zone to widen the search for GPU capacity), or set create_runners = false to deploy the pipeline without runners."
  }
}

variable "gpu_instance_types" {
  description = "GPU instance types for the runners, in order of preference; each must have exactly one GPU (modules/runners/gpu_instance_types.json lists the known ones)."
  type        = list(string)
  # The .2xlarge of each family: the smallest whose CPUs keep its GPU fed. A marker worker spends
  # 0.2 CPU s on a text page and 0.75 on a scan (bench/results/2026-12-05-marker-cpu); the
  # runner keeps 2 of the physical cores for the model servers, so an .xlarge (2 cores) leaves
  # its GPU waiting on one worker and a .2xlarge (4 cores) runs 2 workers (mps/README.md).
  default = ["g6.2xlarge", "g5.2xlarge", "g6e.2xlarge"]

  validation {
    condition     = length(var.gpu_instance_types) > 0
    error_message = "gpu_instance_types needs at least one instance type, e.g. [\"g6.2xlarge\"]."
  }

  # One GPU per task (issue 10): a task's vLLM sidecar and model servers sit on the one GPU the
  # task holds, and one task runs per instance, so further GPUs would be billed and idle.
  validation {
    condition     = alltrue([for t in var.gpu_instance_types : lookup(jsondecode(file("${path.module}/modules/runners/gpu_instance_types.json")).gpus, t, 1) == 1])
    error_message = "gpu_instance_types may hold only one-GPU instance types, and ${join(", ", [for t in var.gpu_instance_types : "${t} has ${lookup(jsondecode(file("${path.module}/modules/runners/gpu_instance_types.json")).gpus, t, 1)} GPUs" if lookup(jsondecode(file("${path.module}/modules/runners/gpu_instance_types.json")).gpus, t, 1) != 1])}: a runner task holds one GPU (its vLLM sidecar and model servers sit on it) and one task runs per instance, so the other GPUs would be paid for and never used. Use one-GPU sizes, e.g. g6.2xlarge, g5.2xlarge, g6e.2xlarge, or p5.4xlarge for an H100."
  }

  validation {
    condition     = alltrue([for t in var.gpu_instance_types : contains(keys(jsondecode(file("${path.module}/modules/runners/gpu_instance_types.json")).gpus), t)])
    error_message = "gpu_instance_types holds types not known to have one NVIDIA GPU: ${join(", ", [for t in var.gpu_instance_types : t if !contains(keys(jsondecode(file("${path.module}/modules/runners/gpu_instance_types.json")).gpus), t)])}. Known one-GPU types: ${join(", ", sort([for t, n in jsondecode(file("${path.module}/modules/runners/gpu_instance_types.json")).gpus : t if n == 1]))}; add a type with its GPU count to modules/runners/gpu_instance_types.json."
  }
}

variable "gpu_ami_release" {
  description = "The ECS-optimized Amazon Linux 2023 GPU AMI release the runners launch (NVIDIA driver and container toolkit included): pinned, so no apply replaces instances on its own. \"recommended\" follows AWS's latest instead. To upgrade, set the release `pagefleet preflight` names as AWS's latest and apply: instances the group launches from then on run it."
  type        = string
  default     = "al2023-ami-ecs-gpu-hvm-2023.0.20260922-kernel-6.1-x86_64-ebs"

  validation {
    condition     = can(regex("^(recommended|al2023-ami-ecs-gpu-hvm-[0-9.]+-kernel-[0-9.]+-x86_64-ebs)$", var.gpu_ami_release))
    error_message = "gpu_ami_release is \"recommended\" or an ECS GPU AMI release name, e.g. al2023-ami-ecs-gpu-hvm-2023.0.20260922-kernel-6.1-x86_64-ebs (`aws ssm get-parameter --name /aws/service/ecs/optimized-ami/amazon-linux-2023/gpu/recommended/image_name` gives the latest)."
  }
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
  description = "Marker worker processes per GPU task (PAGEFLEET_WORKERS_PER_GPU); the splitter's lanes and the scaling policy count them. Null: as the runner sizes them on the smallest of gpu_instance_types (stack.json's marker_workers: physical cores less the 2 the model servers keep, at most 8): 2 on a .2xlarge, 6 on a .4xlarge."
  type        = number
  default     = null

  validation {
    condition     = var.workers_per_gpu == null || try(var.workers_per_gpu >= 1 && floor(var.workers_per_gpu) == var.workers_per_gpu, false)
    error_message = "workers_per_gpu must be a whole number of workers, at least 1 (or null to size them from gpu_instance_types)."
  }
}

variable "max_runners" {
  description = "Most runner tasks (and GPU instances) at once; null takes the scaling policy's (stack.json, from pagefleet/scaling.py). Past 20 the steps from zero stop at 20 tasks (Application Auto Scaling's step adjustments per policy) and target tracking scales on."
  type        = number
  default     = null

  validation {
    condition     = var.max_runners == null || try(var.max_runners >= 1 && floor(var.max_runners) == var.max_runners, false)
    error_message = "max_runners must be a whole number of runner tasks, at least 1 (or null for stack.json's)."
  }
}

variable "spread_tasks" {
  description = "Runner tasks' worth of workers (spread_tasks x workers_per_gpu) the splitter spreads a small document over: 1 (stack.json's default) converts it on the one task leaving zero starts for it; more converts it sooner on a fleet already running that many tasks, as more, smaller chunks. At most acceptable_latency_s / seconds_per_chunk lanes. Null takes the scaling policy's (stack.json, from pagefleet/scaling.py)."
  type        = number
  default     = null
}

variable "runner_image_tag" {
  description = "Tag of the runner image in the ECR repository: the git revision `make runner-image` pushed, which it writes to terraform/runner-image.auto.tfvars.json. Needed with create_runners; never `latest` (the tags are immutable)."
  type        = string
  default     = null

  validation {
    condition     = var.runner_image_tag == null || lower(coalesce(var.runner_image_tag, "-")) != "latest"
    error_message = "runner_image_tag must not be \"latest\": the repository's tags are immutable, so only one image could ever be \"latest\", and a moving tag would hide which image a task runs. Run `make runner-image`, which tags the image with the git revision and hands that tag to Terraform (terraform/runner-image.auto.tfvars.json)."
  }

  validation {
    condition     = var.runner_image_tag == null || can(regex("^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$", var.runner_image_tag))
    error_message = "runner_image_tag must be a Docker tag: up to 128 letters, digits, underscores, dots and hyphens, not starting with a dot or hyphen."
  }
}

variable "ecr_force_delete" {
  description = "Let `terraform destroy` delete the runner and vLLM image repositories with their images. Set it (and apply) only to tear the deployment down."
  type        = bool
  default     = false
}

variable "runner_memory_mb" {
  description = "Memory reserved for a runner task, MiB."
  type        = number
  default     = 12288
}

variable "vllm_image" {
  description = "Image of the runners' vLLM sidecar serving surya's OCR model (datalab-to/surya-ocr-2), by version tag. `make vllm-image` copies it into this deployment's ECR and sets this to the copy (terraform/vllm-image.auto.tfvars.json), so instances do not pull it from Docker Hub through NAT."
  type        = string
  default     = "vllm/vllm-openai:v0.20.1"

  validation {
    condition     = can(regex(":[A-Za-z0-9_][A-Za-z0-9_.-]*$", var.vllm_image)) && !can(regex(":latest$", var.vllm_image))
    error_message = "vllm_image needs a version tag (e.g. vllm/vllm-openai:v0.20.1), not \"latest\" or none: the sidecar's arguments are surya's for a given vLLM, and instances started at different times must run the same one."
  }
}

variable "vllm_image_has_weights" {
  description = "Whether vllm_image holds datalab-to/surya-ocr-2's weights in its Hugging Face cache: then the sidecar runs with HF_HUB_OFFLINE=1, else each new instance downloads them (README: the weights' licence)."
  type        = bool
  default     = false
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

variable "create_dashboard" {
  description = "A CloudWatch dashboard of the pipeline: messages waiting and their age, runner tasks, GPU instances and utilisation, function errors, jobs ended by status, the alarms."
  type        = bool
  default     = true
}

variable "monthly_budget_usd" {
  description = "A monthly AWS Budgets cost budget (USD) of the resources tagged Deployment = name, mailed at 80% and 100% of actual cost and 100% forecast; null creates none. Budgets sees the tag only once it is activated as a cost allocation tag (Billing console)."
  type        = number
  default     = null
}

variable "budget_emails" {
  description = "Who the budget mails; null: alarm_emails."
  type        = list(string)
  default     = null
}

variable "cost_anomaly_threshold_usd" {
  description = "Mail a daily summary of the cost anomalies AWS Cost Anomaly Detection finds (USD of total impact at or above this) to cost_anomaly_emails; null creates no subscription and no monitor. The monitor made watches the resources tagged Deployment = name (a cost allocation tag, as for the budget); cost_anomaly_monitor_arn brings one instead."
  type        = number
  default     = null
}

variable "cost_anomaly_monitor_arn" {
  description = "An existing Cost Anomaly Detection monitor for the subscription (e.g. the account's Default-Services-Monitor, `aws ce get-anomaly-monitors`); null creates one of the resources tagged Deployment = name. Needed in an AWS Organizations member account, where only the management account may create tag monitors."
  type        = string
  default     = null
}

variable "cost_anomaly_emails" {
  description = "Who the anomaly summary mails (at most 10); null: budget_emails, else alarm_emails."
  type        = list(string)
  default     = null
}

variable "alarm_actions" {
  description = "ARNs (e.g. an existing SNS topic) notified by the alarms, besides the alarm topic."
  type        = list(string)
  default     = []
}

variable "create_alarm_topic" {
  description = "Create an SNS topic `<name>-alarms` (encrypted with the deployment's key) that every alarm notifies; alarm_emails creates it too."
  type        = bool
  default     = false
}

variable "alarm_emails" {
  description = "E-mail addresses subscribed to the alarm topic (each confirms the subscription AWS mails); any address creates the topic."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for e in var.alarm_emails : can(regex("^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$", e))])
    error_message = "alarm_emails must be e-mail addresses, e.g. [\"ops@example.com\"]."
  }
}
