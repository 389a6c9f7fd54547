data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}
data "aws_region" "current" {}

locals {
  account_id = data.aws_caller_identity.current.account_id
  # Both runner task definitions' (GPU and CPU) refusal of a missing image tag.
  image_tag_missing = "runner_image_tag is not set, so the task has no image: run `make runner-image` (it builds docker/runner.Dockerfile, pushes it to ${join("", aws_ecr_repository.this[*].repository_url)} tagged with the git revision, and writes the tag to terraform/runner-image.auto.tfvars.json, which deploy reads), or set runner_image_tag to a tag already pushed there."
  partition         = data.aws_partition.current.partition
  region            = data.aws_region.current.name

  # NVIDIA GPUs per instance type: the one-GPU rule of var.instance_types (and of the root).
  gpus_per_instance_type = jsondecode(file("${path.module}/gpu_instance_types.json")).gpus
  # g4dn is listed for its GPU count but refused (variables.tf: its T4 has no bfloat16).
  one_gpu_types_text = join(", ", sort([for t, n in local.gpus_per_instance_type : t if n == 1 && !startswith(t, "g4dn.")]))

  # What exists of each kind: GPU instances, their sidecar and MPS; or Fargate tasks.
  gpu = var.create && var.kind == "gpu"
  cpu = var.create && var.kind == "cpu"
  # The CPU task's size and W, derived in cpu_task.json's comment from the text-layer
  # converter's measured costs; the root and the fleet simulator read the same file.
  cpu_task = jsondecode(file("${path.module}/cpu_task.json"))
  # Each container's logs in the module's group, a stream prefix per container.
  log_configuration = {
    for prefix in [local.vllm_name, local.container_name] : prefix => {
      logDriver = "awslogs"
      options = {
        awslogs-group         = one(aws_cloudwatch_log_group.this[*].name)
        awslogs-region        = local.region
        awslogs-stream-prefix = prefix
      }
    }
  }

  mps_dir        = coalesce(var.mps_dir, "${path.module}/../../../mps")
  mps_scripts    = ["common.sh", "start_mps.sh", "stop_mps.sh", "check_mps.sh"]
  container_name = "runner"
  log_group_name = "/ecs/${var.name}"

  ##############################################################################
  # vLLM sidecar: surya's OCR model behind an OpenAI-compatible server
  ##############################################################################

  vllm_name = "vllm"
  # surya refuses a server whose /v1/models reports another name (SURYA_MODEL_CHECKPOINT).
  vllm_model = "datalab-to/surya-ocr-2"
  vllm_port  = 8000
  # network_mode is "bridge": each container has its own network namespace, so 127.0.0.1 in the
  # runner is the runner itself (the README's 127.0.0.1 assumes awsvpc). The runner links to the
  # sidecar and reaches it by name on the task's bridge; no port is published on the host.
  # host mode would make 127.0.0.1 work but let containers reach the instance metadata (and
  # role) that IMDSv2's one hop keeps from bridge containers; awsvpc needs an ENI per task.
  inference_url = "http://${local.vllm_name}:${local.vllm_port}/v1"

  # The GPU surya sizes the server (max-num-seqs, max-num-batched-tokens) and each worker's request
  # concurrency for: surya/inference/backends/vllm.py, GPU_VRAM_GB and _gpu_settings().
  surya_gpu_vram_gb = {
    "b300"    = 270, "b200" = 180, "h200" = 141, "h100" = 80, "a100-80" = 80, "a100" = 40,
    "a100-40" = 40, "l40s" = 48, "a10" = 24, "l4" = 24, "5090" = 32, "4090" = 24, "3090" = 24,
    "t4"      = 16,
  }
  # The GPU of an EC2 instance family, as surya names it.
  instance_family_gpu = {
    "g4dn" = "t4", "g5" = "a10", "g6" = "l4", "gr6" = "l4", "g6e" = "l40s", "p4d" = "a100",
    "p4de" = "a100-80", "p5" = "h100", "p5e" = "h200", "p5en" = "h200", "p6-b200" = "b200",
  }
  # One task definition serves every instance type of the group, so it is sized for the smallest
  # GPU among them (on a larger one the server merely queues less).
  instance_gpus = [for t in var.instance_types : lookup(local.instance_family_gpu, split(".", t)[0], "")]
  derived_gpu_type = (
    contains(local.instance_gpus, "") ? null :
    [for g in local.instance_gpus : g if local.surya_gpu_vram_gb[g] == min([for h in local.instance_gpus : local.surya_gpu_vram_gb[h]]...)][0]
  )
  vllm_gpu_type = coalesce(var.vllm_gpu_type, local.derived_gpu_type, "unknown")
  vllm_vram_gb  = lookup(local.surya_gpu_vram_gb, local.vllm_gpu_type, 24)
  # surya's formula: a 24 GB baseline of 8192 batched tokens and 32 sequences, scaled by VRAM.
  vllm_max_num_batched_tokens = max(1024, pow(2, floor(log(8192 * local.vllm_vram_gb / 24, 2))))
  vllm_max_num_seqs           = max(8, floor(floor(32 * local.vllm_vram_gb / 24) / 8) * 8)

  # The arguments surya passes when it starts this image itself, served name included.
  vllm_args = concat([
    "--model", local.vllm_model,
    "--served-model-name", local.vllm_model,
    "--host", "0.0.0.0",
    "--port", tostring(local.vllm_port),
    "--no-enforce-eager",
    "--dtype", "bfloat16",
    "--max-model-len", "18000",
    "--max-num-seqs", tostring(local.vllm_max_num_seqs),
    "--max-num-batched-tokens", tostring(local.vllm_max_num_batched_tokens),
    "--gpu-memory-utilization", tostring(var.vllm_gpu_memory_utilization),
    "--enable-prefix-caching",
    "--mm-processor-kwargs", jsonencode({ min_pixels = 3136, max_pixels = 6291456 }),
    "--speculative-config", jsonencode({ method = "mtp", num_speculative_tokens = 2 }),
  ], var.vllm_extra_args)

  # The sidecar joins the instance's MPS daemon like the runner's workers do (runner/worker_plan.py
  # gives them CUDA_MPS_PIPE_DIRECTORY=<mps dir>); without a listening daemon it exits rather
  # than run beside MPS unshared (PAGEFLEET_MPS=on). It sees every GPU of the instance (no GPU
  # requirement of its own): it serves only where there is exactly one, pinned to it by UUID,
  # so nothing lands on "GPU 0" of a larger instance while the runner's GPU is elsewhere.
  # No CUDA_MPS_ACTIVE_THREAD_PERCENTAGE: the server may use every SM (mps/README.md).
  vllm_entrypoint = <<-EOT
    set -eu
    uuids=$(nvidia-smi --query-gpu=uuid --format=csv,noheader)
    count=$(printf '%s\n' "$uuids" | grep -c . || true)
    if [ "$count" != 1 ]; then
      echo "vllm: $count GPUs visible; the runner task serves one GPU per instance (one-GPU instance types)" >&2
      exit 1
    fi
    pipe="${var.mps_pipe_directory}"
    if [ ! -e "$pipe/control" ]; then
      echo "vllm: no MPS control daemon in $pipe; is nvidia-mps.service (or pagefleet-mps.service) running?" >&2
      exit 1
    fi
    export CUDA_VISIBLE_DEVICES="$uuids"
    export CUDA_MPS_PIPE_DIRECTORY="$pipe"
    exec vllm serve "$@"
  EOT

  # vLLM's liveness endpoint. The image is Python-based (vllm is a Python package, its entry point
  # a Python script), so the check uses python3 rather than assuming curl in the image.
  vllm_health_command = "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:${local.vllm_port}/health', timeout=5).status == 200 else 1)"
  # ECS caps startPeriod at 300 s. Model load, CUDA graph capture and, on a cold cache,
  # torch.compile can take longer: 10 more failing probes 30 s apart give it 10 minutes in all,
  # surya's own startup wait for a server it spawns.
  vllm_health_check = {
    command     = ["CMD", "python3", "-c", local.vllm_health_command]
    startPeriod = 300
    interval    = 30
    timeout     = 10
    retries     = 10
  }
  vllm_start_timeout_s = local.vllm_health_check.startPeriod + local.vllm_health_check.interval * local.vllm_health_check.retries

  # Settings the task layout owns, over var.environment: the runner talks to this sidecar, for
  # this GPU, and knows the stopTimeout ECS gives it.
  runner_env = merge(var.environment, {
    PAGEFLEET_CONVERTER            = "marker"
    PAGEFLEET_MARKER_INFERENCE_URL = local.inference_url
    PAGEFLEET_MARKER_VLLM_GPU_TYPE = local.vllm_gpu_type
    PAGEFLEET_STOP_TIMEOUT_S       = tostring(var.stop_timeout_s)
    PAGEFLEET_MPS_DIR              = var.mps_pipe_directory
  })
  # The containers' uid and the sidecar's USER/LOGNAME, in a file that
  # tests/test_runner_task_env.py replays as a uid without a passwd entry.
  task_environment = jsondecode(file("${path.module}/task_environment.json"))

  # The CPU runner: the text-layer converter, one worker per vCPU each with its share of the
  # task's memory, no MPS (no GPU: the supervisor plans CPU workers, runner/worker_plan.py).
  cpu_runner_env = merge({ for k, v in var.environment : k => v if !startswith(k, "PAGEFLEET_MPS") && !startswith(k, "PAGEFLEET_MARKER_") && k != "PAGEFLEET_WORKERS_PER_GPU" }, {
    PAGEFLEET_CONVERTER         = "text-layer"
    PAGEFLEET_WORKERS           = tostring(local.cpu_task.workers)
    PAGEFLEET_CONVERT_MEMORY_MB = tostring(local.cpu_task.convert_memory_mb)
    PAGEFLEET_STOP_TIMEOUT_S    = tostring(var.stop_timeout_s)
    PAGEFLEET_MPS               = "off"
  })
  vllm_env = merge(local.task_environment.vllm_environment, {
    # uid 1000 has no passwd entry in the vLLM image, so HOME would be / (not writable); the
    # instance cache volume holds the Hugging Face, vLLM and compile caches across tasks.
    HOME = var.vllm_cache_container_path
  }, var.vllm_image_has_weights ? { HF_HUB_OFFLINE = "1" } : {}, var.vllm_environment)

  mps_mount = {
    sourceVolume  = "mps-pipes"
    containerPath = var.mps_pipe_directory
    readOnly      = false
  }
}

################################################################################
# Image repositories: the runner (`make runner-image`) and the vLLM sidecar's mirror
# (`make vllm-image`), both with immutable tags
################################################################################

resource "aws_ecr_repository" "this" {
  count = var.create ? 1 : 0

  name                 = var.name
  image_tag_mutability = "IMMUTABLE"
  force_delete         = var.force_delete

  image_scanning_configuration {
    scan_on_push = true
  }

  encryption_configuration {
    encryption_type = "KMS"
    kms_key         = var.kms_key_arn
  }

  tags = var.tags
}

resource "aws_ecr_lifecycle_policy" "this" {
  count = var.create ? 1 : 0

  repository = aws_ecr_repository.this[0].name
  # ECR never expires an image by a rule when a rule of higher priority matches its tags, so
  # the deployed image (image_tag), matched first, outlives 20 newer pushes: a rollback to an
  # older revision keeps the image its tasks pull.
  policy = jsonencode({
    rules = concat(var.image_tag == null ? [] : [{
      rulePriority = 1
      description  = "The deployed image (image_tag) is never expired"
      selection    = { tagStatus = "tagged", tagPatternList = [var.image_tag], countType = "imageCountMoreThan", countNumber = 1 }
      action       = { type = "expire" }
      }], [{
      rulePriority = 2
      description  = "Keep the 20 newest images"
      selection    = { tagStatus = "any", countType = "imageCountMoreThan", countNumber = 20 }
      action       = { type = "expire" }
    }])
  })
}

# A copy of the public vLLM image (several GB) in this account and region: instances pull it
# from ECR (through an S3 gateway endpoint, at no NAT charge and no Docker Hub rate limit)
# instead of from Docker Hub through the NAT gateway. A pull-through cache rule would do the
# same, but for Docker Hub it needs Docker Hub credentials in Secrets Manager; the mirror step
# needs only the Docker client that `make runner-image` needs anyway.
# Kept with kind cpu too: switching kinds neither deletes a repository that holds images nor
# waits for one, and the mirror can be made before the GPU quota arrives.
resource "aws_ecr_repository" "vllm" {
  count = var.create ? 1 : 0

  name                 = "${var.name}-vllm"
  image_tag_mutability = "IMMUTABLE"
  force_delete         = var.force_delete

  image_scanning_configuration {
    scan_on_push = true
  }

  encryption_configuration {
    encryption_type = "KMS"
    kms_key         = var.kms_key_arn
  }

  tags = var.tags
}

resource "aws_ecr_lifecycle_policy" "vllm" {
  count = var.create ? 1 : 0

  repository = aws_ecr_repository.vllm[0].name
  policy = jsonencode({
    rules = [{
      rulePriority = 1
      description  = "Keep the 5 newest vLLM mirrors"
      selection    = { tagStatus = "any", countType = "imageCountMoreThan", countNumber = 5 }
      action       = { type = "expire" }
    }]
  })
}

################################################################################
# Cluster
################################################################################

resource "aws_ecs_cluster" "this" {
  count = var.create ? 1 : 0

  name = var.name

  # RunningTaskCount, the denominator of the backlog-per-task scaling metric.
  setting {
    name  = "containerInsights"
    value = "enabled"
  }

  tags = var.tags
}

resource "aws_cloudwatch_log_group" "this" {
  count = var.create ? 1 : 0

  # checkov:skip=CKV_AWS_338:Operational logs only; the job records in outbox/ are the lasting audit trail, and a year of debug logs costs more than it tells.
  name              = local.log_group_name
  retention_in_days = var.log_retention_days
  kms_key_id        = var.kms_key_arn

  tags = var.tags
}

################################################################################
# Instances: ECS GPU-optimised AMI, MPS daemon started at boot
################################################################################

data "aws_ssm_parameter" "ami" {
  count = local.gpu ? 1 : 0

  name = var.ami_ssm_parameter
}

resource "aws_iam_role" "instance" {
  count = local.gpu ? 1 : 0

  # IAM names are global to the account: the region keeps two regions' deployments apart.
  name                 = "${var.name}-${data.aws_region.current.name}-instance"
  path                 = var.iam_role_path
  permissions_boundary = var.iam_role_permissions_boundary
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Action    = "sts:AssumeRole"
      Principal = { Service = "ec2.amazonaws.com" }
    }]
  })

  tags = var.tags
}

resource "aws_iam_role_policy_attachment" "instance" {
  for_each = local.gpu ? toset([
    "arn:${local.partition}:iam::aws:policy/service-role/AmazonEC2ContainerServiceforEC2Role",
    # Session Manager instead of SSH: no inbound port is open.
    "arn:${local.partition}:iam::aws:policy/AmazonSSMManagedInstanceCore",
  ]) : toset([])

  role       = aws_iam_role.instance[0].name
  policy_arn = each.value
}

resource "aws_iam_instance_profile" "this" {
  count = local.gpu ? 1 : 0

  name = "${var.name}-${data.aws_region.current.name}-instance"
  path = var.iam_role_path
  role = aws_iam_role.instance[0].name

  tags = var.tags
}

# The GPU instances', or with kind cpu each Fargate task's network interface.
resource "aws_security_group" "this" {
  count = var.create ? 1 : 0

  name        = "${var.name}-runners"
  description = "pagefleet runners: no inbound; HTTPS out to AWS APIs and ECR"
  vpc_id      = var.vpc_id

  egress {
    description = "HTTPS to S3, SQS, ECR, ECS, CloudWatch (runners pull work, they serve nothing)"
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }

  tags = var.tags
}

resource "aws_launch_template" "this" {
  count = local.gpu ? 1 : 0

  name_prefix            = "${var.name}-"
  image_id               = data.aws_ssm_parameter.ami[0].value
  instance_type          = var.instance_types[0]
  update_default_version = true
  vpc_security_group_ids = [aws_security_group.this[0].id]

  user_data = base64encode(templatefile("${path.module}/user_data.sh.tftpl", {
    cluster_name       = aws_ecs_cluster.this[0].name
    stop_timeout_s     = var.stop_timeout_s
    mps_dir_on_host    = var.mps_pipe_directory
    vllm_cache_on_host = var.vllm_cache_host_path
    mps_scripts        = { for name in local.mps_scripts : name => filebase64("${local.mps_dir}/${name}") }
    mps_unit_b64       = filebase64("${local.mps_dir}/pagefleet-mps.service")
  }))

  iam_instance_profile {
    arn = aws_iam_instance_profile.this[0].arn
  }

  # IMDSv2 only, one hop: containers on the bridge network cannot borrow the instance role.
  metadata_options {
    http_endpoint               = "enabled"
    http_tokens                 = "required"
    http_put_response_hop_limit = 1
  }

  monitoring {
    enabled = true
  }

  block_device_mappings {
    device_name = "/dev/xvda"

    ebs {
      volume_size           = var.root_volume_size_gb
      volume_type           = "gp3"
      encrypted             = true
      delete_on_termination = true
    }
  }

  # The GPU instances are the cost: they and their volumes carry the deployment's tags.
  dynamic "tag_specifications" {
    for_each = ["instance", "volume"]

    content {
      resource_type = tag_specifications.value
      tags          = merge(var.tags, { Name = "${var.name}-runner" })
    }
  }

  tags = var.tags
}

resource "aws_autoscaling_group" "this" {
  count = local.gpu ? 1 : 0

  name_prefix         = "${var.name}-"
  min_size            = 0
  max_size            = var.max_instances
  vpc_zone_identifier = var.subnet_ids
  capacity_rebalance  = true

  # Required by the capacity provider's managed termination protection: ECS decides which
  # instances may go, so no instance running a task is terminated by a scale-in.
  protect_from_scale_in = true

  mixed_instances_policy {
    instances_distribution {
      on_demand_base_capacity                  = var.on_demand_base_capacity
      on_demand_percentage_above_base_capacity = var.on_demand_percentage_above_base_capacity
      spot_allocation_strategy                 = "price-capacity-optimized"
    }

    launch_template {
      launch_template_specification {
        launch_template_id = aws_launch_template.this[0].id
        version            = "$Latest"
      }

      dynamic "override" {
        for_each = var.instance_types

        content {
          instance_type = override.value
        }
      }
    }
  }

  tag {
    key                 = "AmazonECSManaged"
    value               = "true"
    propagate_at_launch = true
  }

  dynamic "tag" {
    for_each = var.tags

    content {
      key                 = tag.key
      value               = tag.value
      propagate_at_launch = true
    }
  }

  # Free at one-minute granularity: the dashboard's instance counts.
  enabled_metrics = ["GroupDesiredCapacity", "GroupInServiceInstances", "GroupPendingInstances"]

  lifecycle {
    # The capacity provider owns the desired capacity.
    ignore_changes = [desired_capacity]
  }
}

# ECS creates this role on first use of its console or of a cluster, but not for a capacity
# provider made through the API: in an account that never used ECS, that creation fails with
# "ECS Service Linked Role does not exist".
resource "aws_iam_service_linked_role" "ecs" {
  count = var.create && var.create_service_linked_role ? 1 : 0

  aws_service_name = "ecs.amazonaws.com"
  description      = "ECS on behalf of the ${var.name} runners (created by pagefleet)"

  tags = var.tags
}

resource "aws_ecs_capacity_provider" "this" {
  count = local.gpu ? 1 : 0

  name = var.name

  depends_on = [aws_iam_service_linked_role.ecs]

  auto_scaling_group_provider {
    auto_scaling_group_arn         = aws_autoscaling_group.this[0].arn
    managed_termination_protection = "ENABLED"
    managed_draining               = "ENABLED"

    managed_scaling {
      status                    = "ENABLED"
      target_capacity           = 100
      minimum_scaling_step_size = 1
      maximum_scaling_step_size = var.max_instances
      instance_warmup_period    = 300
    }
  }

  tags = var.tags
}

resource "aws_ecs_cluster_capacity_providers" "this" {
  count = local.gpu ? 1 : 0

  cluster_name       = aws_ecs_cluster.this[0].name
  capacity_providers = [aws_ecs_capacity_provider.this[0].name]

  default_capacity_provider_strategy {
    capacity_provider = aws_ecs_capacity_provider.this[0].name
    weight            = 1
  }
}

################################################################################
# Task roles
################################################################################

resource "aws_iam_role" "execution" {
  count = var.create ? 1 : 0

  name                 = "${var.name}-${data.aws_region.current.name}-execution"
  path                 = var.iam_role_path
  permissions_boundary = var.iam_role_permissions_boundary
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Action    = "sts:AssumeRole"
      Principal = { Service = "ecs-tasks.amazonaws.com" }
    }]
  })

  tags = var.tags
}

resource "aws_iam_role_policy" "execution" {
  count = var.create ? 1 : 0

  name = "pull-and-log"
  role = aws_iam_role.execution[0].id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        # GetAuthorizationToken has no resource-level permissions.
        Sid      = "EcrLogin"
        Effect   = "Allow"
        Action   = ["ecr:GetAuthorizationToken"]
        Resource = ["*"]
      },
      {
        Sid      = "PullImages"
        Effect   = "Allow"
        Action   = ["ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"]
        Resource = concat(aws_ecr_repository.this[*].arn, local.gpu ? aws_ecr_repository.vllm[*].arn : [])
      },
      {
        Sid      = "DecryptImageLayers"
        Effect   = "Allow"
        Action   = ["kms:Decrypt"]
        Resource = [var.kms_key_arn]
      },
      {
        Sid      = "WriteLogs"
        Effect   = "Allow"
        Action   = ["logs:CreateLogStream", "logs:PutLogEvents"]
        Resource = ["${aws_cloudwatch_log_group.this[0].arn}:*"]
      },
    ]
  })
}

resource "aws_iam_role" "task" {
  count = var.create ? 1 : 0

  name                 = "${var.name}-${data.aws_region.current.name}-task"
  path                 = var.iam_role_path
  permissions_boundary = var.iam_role_permissions_boundary
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Action    = "sts:AssumeRole"
      Principal = { Service = "ecs-tasks.amazonaws.com" }
      Condition = { StringEquals = { "aws:SourceAccount" = local.account_id } }
    }]
  })

  tags = var.tags
}

resource "aws_iam_role_policy" "task" {
  count = var.create ? 1 : 0

  name = "pagefleet-runner"
  role = aws_iam_role.task[0].id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        # runner/worker/: long-poll, heartbeat (ChangeMessageVisibility), delete when written.
        Sid      = "ConsumeChunks"
        Effect   = "Allow"
        Action   = ["sqs:GetQueueUrl", "sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes"]
        Resource = [var.chunks_queue_arn]
      },
      {
        # The manifest only to tell a job that ended (a late chunk, dropped) from an open one
        # whose chunk PDF went missing (recorded). Without s3:ListBucket a missing key is a 403,
        # which pagefleet/storage.py reads as missing for this role.
        Sid      = "ReadChunksAndManifests"
        Effect   = "Allow"
        Action   = ["s3:GetObject"]
        Resource = ["${var.bucket_arn}/jobs/*/chunks/*", "${var.bucket_arn}/jobs/*/manifest.json"]
      },
      {
        Sid      = "WriteChunkResults"
        Effect   = "Allow"
        Action   = ["s3:PutObject"]
        Resource = ["${var.bucket_arn}/jobs/*/results/*", "${var.bucket_arn}/jobs/*/assets/*"]
      },
      {
        # runner/worker/: a chunk that fails on time or memory is split; its halves' PDFs
        # go beside it, and a redelivered chunk's result says whether it was split already.
        Sid      = "SplitChunks"
        Effect   = "Allow"
        Action   = ["s3:GetObject", "s3:PutObject"]
        Resource = ["${var.bucket_arn}/jobs/*/chunks/*", "${var.bucket_arn}/jobs/*/results/*"]
      },
      {
        # The halves' messages, and a released chunk's, sent again so that a release on drain
        # or Spot interruption costs it no attempt (pagefleet/queues.py: AsyncQueue.release).
        Sid      = "SendChunks"
        Effect   = "Allow"
        Action   = ["sqs:SendMessage"]
        Resource = [var.chunks_queue_arn]
      },
      {
        # pagefleet/conversions.py: each conversion counts itself (conditional PUTs), and its
        # result's attempts are what the counter says.
        Sid      = "CountConversions"
        Effect   = "Allow"
        Action   = ["s3:GetObject", "s3:PutObject"]
        Resource = ["${var.bucket_arn}/jobs/*/conversions/*"]
      },
      {
        Sid      = "UseDataKey"
        Effect   = "Allow"
        Action   = ["kms:Decrypt", "kms:GenerateDataKey"]
        Resource = [var.kms_key_arn]
      },
      {
        # runner/protection.py: the agent's $ECS_AGENT_URI/task-protection/v1/state calls
        # ECS with the task role.
        Sid      = "ScaleInProtection"
        Effect   = "Allow"
        Action   = ["ecs:UpdateTaskProtection", "ecs:GetTaskProtection"]
        Resource = ["arn:${local.partition}:ecs:${local.region}:${local.account_id}:task/${var.name}/*"]
      },
    ]
  })
}

################################################################################
# Task definition and service
################################################################################

resource "aws_ecs_task_definition" "this" {
  count = local.gpu ? 1 : 0

  # checkov:skip=CKV_AWS_336:The runner writes chunk PDFs, converter output and model caches under /tmp and its home; the image (docker/runner.Dockerfile) is not laid out for a read-only root yet.

  family                   = var.name
  requires_compatibilities = ["EC2"]
  network_mode             = "bridge"
  # The containers reach the host's MPS control daemons through their pipes and shared memory.
  ipc_mode           = "host"
  task_role_arn      = aws_iam_role.task[0].arn
  execution_role_arn = aws_iam_role.execution[0].arn

  volume {
    name      = "mps-pipes"
    host_path = var.mps_pipe_directory
  }

  # Weights and compile caches of the sidecar, kept on the instance across task replacements
  # (user data creates the folder for uid 1000).
  volume {
    name      = "vllm-cache"
    host_path = var.vllm_cache_host_path
  }

  # One GPU, two CUDA containers. ECS gives each GPU of a `value` requirement to exactly one
  # container (the agent pins it with NVIDIA_VISIBLE_DEVICES and the nvidia runtime), and the only
  # documented way to give one GPU to several containers is ECS-managed MPS (`sharingStrategy`,
  # required of every GPU container of the task), which runs its own MPS daemon in place of
  # the instance's daemon and is meant for one CUDA process per container (mps/README.md,
  # "One GPU per task"). So:
  # - the runner holds the task's one GPU requirement: it places the task on a GPU instance and
  #   reserves the GPU (one task per one-GPU instance), and the supervisor enumerates the GPU it
  #   is given (its UUID pins the workers and the servers they spawn) and finds the MPS pipe;
  # - the sidecar has no requirement and reaches the same GPU through the instance's Docker
  #   default runtime, set to nvidia in user data (AWS's "manual" sharing method), with the
  #   image's own NVIDIA_VISIBLE_DEVICES=all: on the one-GPU instance types of this group that is
  #   the task's GPU, and its entry point refuses to serve when it sees more than one. Nothing
  #   else runs on these instances.
  # Both reach the host's MPS daemon: ipc_mode host (above), the pipe directory mounted at the
  # same path, and uid 1000 (the runner image's USER and `user` on the sidecar).
  container_definitions = jsonencode([
    {
      name      = local.vllm_name
      image     = var.vllm_image
      essential = true
      # The MPS daemon runs as uid 1000; a client of another uid waits for a server of its own
      # (mps/README.md, "Same UID"). The image itself defaults to root.
      user              = local.task_environment.user
      memoryReservation = var.vllm_memory_mb
      # A dependency that never becomes HEALTHY stops the task instead of holding the instance.
      startTimeout = local.vllm_start_timeout_s

      entryPoint = ["/bin/sh", "-c", local.vllm_entrypoint, "vllm"]
      command    = local.vllm_args

      environment = [for k in sort(keys(local.vllm_env)) : { name = k, value = local.vllm_env[k] }]

      mountPoints = [
        local.mps_mount,
        {
          sourceVolume  = "vllm-cache"
          containerPath = var.vllm_cache_container_path
          readOnly      = false
        },
      ]

      healthCheck = local.vllm_health_check

      linuxParameters = {
        initProcessEnabled = true
      }

      logConfiguration = local.log_configuration[local.vllm_name]
    },
    {
      name              = local.container_name
      image             = "${aws_ecr_repository.this[0].repository_url}:${var.image_tag}"
      essential         = true
      memoryReservation = var.task_memory_mb
      # docker/runner.Dockerfile has USER 1000:1000 already; said here too, as on the sidecar.
      user = local.task_environment.user
      # SIGTERM starts the drain (PAGEFLEET_DRAIN_TIMEOUT_S); SIGKILL follows after this. The
      # supervisor is told the same number (PAGEFLEET_STOP_TIMEOUT_S). On stop ECS reverses
      # dependsOn, so the sidecar keeps serving until the runner has drained.
      stopTimeout = var.stop_timeout_s

      resourceRequirements = [{ type = "GPU", value = "1" }]

      # Workers probe the sidecar before taking a chunk; start them once it answers.
      dependsOn = [{ containerName = local.vllm_name, condition = "HEALTHY" }]
      # Bridge networking: PAGEFLEET_MARKER_INFERENCE_URL names the sidecar by this link.
      links = [local.vllm_name]

      environment = [for k in sort(keys(local.runner_env)) : { name = k, value = local.runner_env[k] }]

      mountPoints = [local.mps_mount]

      linuxParameters = {
        initProcessEnabled = true
      }

      logConfiguration = local.log_configuration[local.container_name]
    },
  ])

  lifecycle {
    precondition {
      condition     = var.image_tag != null
      error_message = local.image_tag_missing
    }

    precondition {
      condition     = contains(keys(local.surya_gpu_vram_gb), local.vllm_gpu_type)
      error_message = "vllm_gpu_type must be one of surya's GPU types (${join(", ", sort(keys(local.surya_gpu_vram_gb)))}); set it when an instance type's GPU is not known to the module."
    }
  }

  tags = var.tags
}

################################################################################
# kind = "cpu": the text-layer converter on Fargate
################################################################################

# No GPU, no sidecar, no MPS, no instances: one container, the runner image (it carries the
# text-layer converter beside marker) told PAGEFLEET_CONVERTER=text-layer. Fargate needs no AMI,
# no launch template, no capacity provider and no G/VT instance quota, only the account's
# Fargate vCPU quota (`pagefleet preflight` checks it), so a new account converts on the day it
# deploys. The same queues, scaling policy, roles and records as the GPU runners.
resource "aws_ecs_task_definition" "cpu" {
  count = local.cpu ? 1 : 0

  # checkov:skip=CKV_AWS_336:The runner writes chunk PDFs and converter output under /tmp and its home; the image (docker/runner.Dockerfile) is not laid out for a read-only root yet.

  family                   = var.name
  requires_compatibilities = ["FARGATE"]
  # Fargate's only mode: the task has its own network interface in subnet_ids.
  network_mode       = "awsvpc"
  cpu                = tostring(local.cpu_task.cpu)
  memory             = tostring(local.cpu_task.memory_mib)
  task_role_arn      = aws_iam_role.task[0].arn
  execution_role_arn = aws_iam_role.execution[0].arn

  # The runner image is built for x86-64 (docker/runner.Dockerfile: nvidia/cuda, torch).
  runtime_platform {
    operating_system_family = "LINUX"
    cpu_architecture        = "X86_64"
  }

  # Fargate keeps the pulled image in the task's ephemeral storage (20 GiB unless raised): the
  # runner image with CUDA torch and marker is several GB.
  ephemeral_storage {
    size_in_gib = local.cpu_task.ephemeral_storage_gib
  }

  container_definitions = jsonencode([
    {
      name      = local.container_name
      image     = "${aws_ecr_repository.this[0].repository_url}:${var.image_tag}"
      essential = true
      user      = local.task_environment.user
      # As on the GPU runner: SIGTERM starts the drain, SIGKILL follows (Fargate allows 120 s).
      stopTimeout = var.stop_timeout_s

      environment = [for k in sort(keys(local.cpu_runner_env)) : { name = k, value = local.cpu_runner_env[k] }]

      linuxParameters = {
        initProcessEnabled = true
      }

      logConfiguration = local.log_configuration[local.container_name]
    },
  ])

  lifecycle {
    precondition {
      condition     = var.image_tag != null
      error_message = local.image_tag_missing
    }

    precondition {
      # Fargate's most: https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_ContainerDefinition.html (stopTimeout).
      condition     = var.stop_timeout_s <= 120
      error_message = "A Fargate container gets at most 120 s between SIGTERM and SIGKILL, and the runner's stopTimeout is the drain timeout plus 15 s (${var.stop_timeout_s} s): set drain_timeout_s to 105 s or less for runner_kind = \"cpu\"."
    }

    precondition {
      # Each worker's conversion budget and overhead, and the supervisor's reserve, fit the task.
      condition     = local.cpu_task.workers * (local.cpu_task.convert_memory_mb + 256) + local.cpu_task.reserved_mib <= local.cpu_task.memory_mib && local.cpu_task.workers <= local.cpu_task.cpu / 1024
      error_message = "cpu_task.json: ${local.cpu_task.workers} workers of ${local.cpu_task.convert_memory_mb} + 256 MiB and ${local.cpu_task.reserved_mib} MiB reserved must fit ${local.cpu_task.memory_mib} MiB, one worker per vCPU at most."
    }
  }

  tags = var.tags
}

# The provider keeps a launch type the configuration no longer sets (it is Computed), so the
# service would stay FARGATE after a switch back to gpu: a new kind replaces the service.
resource "terraform_data" "kind" {
  triggers_replace = var.kind
}

resource "aws_ecs_service" "this" {
  count = var.create ? 1 : 0

  name            = var.name
  cluster         = aws_ecs_cluster.this[0].id
  task_definition = local.gpu ? aws_ecs_task_definition.this[0].arn : aws_ecs_task_definition.cpu[0].arn
  desired_count   = 0

  # Workers hold no connections: replacing all of them at once is safe, and needs no spare GPU.
  deployment_minimum_healthy_percent = 0
  deployment_maximum_percent         = 100
  enable_ecs_managed_tags            = true
  propagate_tags                     = "SERVICE"

  # GPU: the capacity provider's instances. CPU: Fargate on demand, in the runner subnets, no
  # public address (the subnets' NAT gateway or VPC endpoints reach ECR, S3, SQS and logs).
  launch_type      = local.cpu ? "FARGATE" : null
  platform_version = local.cpu ? "LATEST" : null

  dynamic "capacity_provider_strategy" {
    for_each = local.gpu ? [true] : []

    content {
      capacity_provider = aws_ecs_capacity_provider.this[0].name
      weight            = 1
    }
  }

  dynamic "network_configuration" {
    for_each = local.cpu ? [true] : []

    content {
      subnets          = var.subnet_ids
      security_groups  = [aws_security_group.this[0].id]
      assign_public_ip = false
    }
  }

  lifecycle {
    # Application Auto Scaling owns the desired count.
    ignore_changes       = [desired_count]
    replace_triggered_by = [terraform_data.kind]
  }

  depends_on = [aws_ecs_cluster_capacity_providers.this]

  tags = var.tags
}
