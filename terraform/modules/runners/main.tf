data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}
data "aws_region" "current" {}

locals {
  account_id = data.aws_caller_identity.current.account_id
  partition  = data.aws_partition.current.partition
  region     = data.aws_region.current.name

  mps_dir        = coalesce(var.mps_dir, "${path.module}/../../../mps")
  mps_scripts    = ["common.sh", "start_mps.sh", "stop_mps.sh", "check_mps.sh"]
  container_name = "runner"
  log_group_name = "/ecs/${var.name}"
}

################################################################################
# Image repository
################################################################################

resource "aws_ecr_repository" "this" {
  count = var.create ? 1 : 0

  name                 = var.name
  image_tag_mutability = "IMMUTABLE"

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
  policy = jsonencode({
    rules = [{
      rulePriority = 1
      description  = "Keep the 20 newest images"
      selection    = { tagStatus = "any", countType = "imageCountMoreThan", countNumber = 20 }
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
  count = var.create ? 1 : 0

  name = var.ami_ssm_parameter
}

resource "aws_iam_role" "instance" {
  count = var.create ? 1 : 0

  name = "${var.name}-instance"
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
  for_each = var.create ? toset([
    "arn:${local.partition}:iam::aws:policy/service-role/AmazonEC2ContainerServiceforEC2Role",
    # Session Manager instead of SSH: no inbound port is open.
    "arn:${local.partition}:iam::aws:policy/AmazonSSMManagedInstanceCore",
  ]) : toset([])

  role       = aws_iam_role.instance[0].name
  policy_arn = each.value
}

resource "aws_iam_instance_profile" "this" {
  count = var.create ? 1 : 0

  name = "${var.name}-instance"
  role = aws_iam_role.instance[0].name

  tags = var.tags
}

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
  count = var.create ? 1 : 0

  name_prefix            = "${var.name}-"
  image_id               = data.aws_ssm_parameter.ami[0].value
  instance_type          = var.instance_types[0]
  update_default_version = true
  vpc_security_group_ids = [aws_security_group.this[0].id]

  user_data = base64encode(templatefile("${path.module}/user_data.sh.tftpl", {
    cluster_name    = aws_ecs_cluster.this[0].name
    stop_timeout_s  = var.stop_timeout_s
    mps_dir_on_host = var.mps_pipe_directory
    mps_scripts     = { for name in local.mps_scripts : name => filebase64("${local.mps_dir}/${name}") }
    mps_unit_b64    = filebase64("${local.mps_dir}/pagefleet-mps.service")
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

  tag_specifications {
    resource_type = "instance"
    tags          = merge(var.tags, { Name = "${var.name}-runner" })
  }

  tags = var.tags
}

resource "aws_autoscaling_group" "this" {
  count = var.create ? 1 : 0

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

  lifecycle {
    # The capacity provider owns the desired capacity.
    ignore_changes = [desired_capacity]
  }
}

resource "aws_ecs_capacity_provider" "this" {
  count = var.create ? 1 : 0

  name = var.name

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
  count = var.create ? 1 : 0

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

  name = "${var.name}-execution"
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
        Sid      = "PullRunnerImage"
        Effect   = "Allow"
        Action   = ["ecr:BatchCheckLayerAvailability", "ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"]
        Resource = [aws_ecr_repository.this[0].arn]
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

  name = "${var.name}-task"
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
        # runner/worker.py: long-poll, heartbeat (ChangeMessageVisibility), delete when written.
        Sid      = "ConsumeChunks"
        Effect   = "Allow"
        Action   = ["sqs:GetQueueUrl", "sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes"]
        Resource = [var.chunks_queue_arn]
      },
      {
        Sid      = "ReadChunkPdfs"
        Effect   = "Allow"
        Action   = ["s3:GetObject"]
        Resource = ["${var.bucket_arn}/jobs/*/chunks/*"]
      },
      {
        Sid      = "WriteChunkResults"
        Effect   = "Allow"
        Action   = ["s3:PutObject"]
        Resource = ["${var.bucket_arn}/jobs/*/results/*", "${var.bucket_arn}/jobs/*/assets/*"]
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
  count = var.create ? 1 : 0

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

  container_definitions = jsonencode([{
    name              = local.container_name
    image             = "${aws_ecr_repository.this[0].repository_url}:${var.image_tag}"
    essential         = true
    memoryReservation = var.task_memory_mb
    # SIGTERM starts the drain (PAGEFLEET_DRAIN_TIMEOUT_S); SIGKILL follows after this.
    stopTimeout = var.stop_timeout_s

    resourceRequirements = [{ type = "GPU", value = "1" }]

    environment = [for k in sort(keys(var.environment)) : { name = k, value = var.environment[k] }]

    mountPoints = [{
      sourceVolume  = "mps-pipes"
      containerPath = var.mps_pipe_directory
      readOnly      = false
    }]

    linuxParameters = {
      initProcessEnabled = true
    }

    logConfiguration = {
      logDriver = "awslogs"
      options = {
        awslogs-group         = aws_cloudwatch_log_group.this[0].name
        awslogs-region        = local.region
        awslogs-stream-prefix = local.container_name
      }
    }
  }])

  tags = var.tags
}

resource "aws_ecs_service" "this" {
  count = var.create ? 1 : 0

  name            = var.name
  cluster         = aws_ecs_cluster.this[0].id
  task_definition = aws_ecs_task_definition.this[0].arn
  desired_count   = 0

  # Workers hold no connections: replacing all of them at once is safe, and needs no spare GPU.
  deployment_minimum_healthy_percent = 0
  deployment_maximum_percent         = 100
  enable_ecs_managed_tags            = true
  propagate_tags                     = "SERVICE"

  capacity_provider_strategy {
    capacity_provider = aws_ecs_capacity_provider.this[0].name
    weight            = 1
  }

  lifecycle {
    # Application Auto Scaling owns the desired count.
    ignore_changes = [desired_count]
  }

  depends_on = [aws_ecs_cluster_capacity_providers.this]

  tags = var.tags
}
