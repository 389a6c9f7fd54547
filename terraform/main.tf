data "aws_caller_identity" "current" {}

locals {
  # The one definition of the queues, notifications and setting defaults: pagefleet/stack.py,
  # exported by scripts/stack_json.py (tests fail when the two disagree).
  stack = jsondecode(file("${path.module}/stack.json"))

  # Every resource's tags (the provider's default tags) and what the runners launch with:
  # default tags reach neither Auto Scaling instances nor their volumes.
  tags = merge({ Project = "pagefleet", Deployment = var.name }, var.tags)

  # runner_kind: marker on GPU instances, or the text-layer converter on Fargate tasks sized in
  # modules/runners/cpu_task.json (W workers each, one per vCPU).
  # A GPU task runs the marker workers the runner would size on the smallest instance type it
  # may land on; the runner is told that number, so lanes and policy count the workers that run.
  cpu_runners      = var.runner_kind == "cpu"
  cpu_task         = jsondecode(file("${path.module}/modules/runners/cpu_task.json"))
  gpu_workers      = coalesce(var.workers_per_gpu, min([for t in var.gpu_instance_types : lookup(local.stack.marker_workers, t, 1)]...))
  workers_per_task = local.cpu_runners ? local.cpu_task.workers : local.gpu_workers

  bucket_name  = coalesce(var.bucket_name, "${var.name}-${data.aws_caller_identity.current.account_id}-${var.region}")
  package_path = coalesce(var.lambda_package_path, "${path.module}/../build/lambda.zip")

  settings = {
    chunk_pages          = coalesce(var.chunk_pages, local.stack.settings.chunk_pages)
    visibility_timeout_s = coalesce(var.visibility_timeout_s, local.stack.settings.visibility_timeout_s)
    heartbeat_s          = coalesce(var.heartbeat_s, local.stack.settings.heartbeat_s)
    convert_timeout_s    = coalesce(var.convert_timeout_s, local.stack.settings.convert_timeout_s)
    drain_timeout_s      = coalesce(var.drain_timeout_s, local.stack.settings.drain_timeout_s)
  }

  # The scaling policy the fleet simulator replays (pagefleet/scaling.py, bench/fleet); the
  # variables override single numbers.
  scaling = merge(local.stack.scaling, {
    max_runners          = coalesce(var.max_runners, local.stack.scaling.max_runners)
    acceptable_latency_s = coalesce(var.acceptable_latency_s, local.stack.scaling.acceptable_latency_s)
    # A CPU task clears W chunks of chunk_cpu_s CPU seconds each in chunk_cpu_s.
    seconds_per_chunk = coalesce(var.seconds_per_chunk, local.cpu_runners ? local.cpu_task.chunk_cpu_s / local.cpu_task.workers : local.stack.scaling.seconds_per_chunk)
    spread_tasks      = coalesce(var.spread_tasks, local.stack.scaling.spread_tasks)
  })

  queues = merge(local.stack.queues, {
    chunks = merge(local.stack.queues.chunks, { visibility_timeout_s = local.settings.visibility_timeout_s })
  })

  handler_env = merge({
    PAGEFLEET_CHUNK_PAGES  = tostring(local.settings.chunk_pages)
    PAGEFLEET_MAX_PAGES    = tostring(local.stack.settings.max_pages)
    PAGEFLEET_MAX_BYTES    = tostring(local.stack.settings.max_bytes)
    PAGEFLEET_MAX_ATTEMPTS = tostring(local.stack.settings.max_attempts)
    # The splitter cuts chunks by what they will cost the runners (pagefleet/costs.py): their
    # converter's page costs, not the Lambda's own cores with the CPU converter's. A chunk is
    # the scaling policy's unit, seconds_per_chunk of a task's time, whatever max_runners is;
    # only a small document is spread, over spread_tasks tasks' workers (pagefleet/scaling.py).
    PAGEFLEET_CONVERTER   = local.runner_env.PAGEFLEET_CONVERTER
    PAGEFLEET_FLEET_LANES = tostring(local.scaling.spread_tasks * local.workers_per_task)
    }, local.cpu_runners ? {
    # The text-layer converter prices a page by its class (text or scan, pagefleet/costs.py);
    # a chunk costs one worker at least seconds_per_chunk x W CPU seconds, so that one chunk is
    # seconds_per_chunk of a task's time as the policy counts it (text chunks would otherwise
    # be 0.5 s and scan chunks one 7.5 s page: a unit fifteenfold apart).
    PAGEFLEET_CHUNK_MIN_COST_S = tostring(local.scaling.seconds_per_chunk * local.workers_per_task)
    } : {
    PAGEFLEET_COST_MARKER_PAGE_S = tostring(local.scaling.seconds_per_chunk / local.settings.chunk_pages)
  })

  # The runners module adds what its task layout decides: the sidecar's
  # PAGEFLEET_MARKER_INFERENCE_URL and PAGEFLEET_MARKER_VLLM_GPU_TYPE, PAGEFLEET_STOP_TIMEOUT_S.
  runner_env = {
    PAGEFLEET_BUCKET               = module.storage.bucket_name
    PAGEFLEET_QUEUE_PREFIX         = var.name
    PAGEFLEET_REGION               = var.region
    PAGEFLEET_CONVERTER            = local.cpu_runners ? "text-layer" : "marker"
    PAGEFLEET_WORKERS              = tostring(local.workers_per_task)
    PAGEFLEET_WORKERS_PER_GPU      = tostring(local.workers_per_task)
    PAGEFLEET_VISIBILITY_TIMEOUT_S = tostring(local.settings.visibility_timeout_s)
    PAGEFLEET_HEARTBEAT_S          = tostring(local.settings.heartbeat_s)
    PAGEFLEET_CONVERT_TIMEOUT_S    = tostring(local.settings.convert_timeout_s)
    PAGEFLEET_DRAIN_TIMEOUT_S      = tostring(local.settings.drain_timeout_s)
    PAGEFLEET_MAX_ATTEMPTS         = tostring(local.stack.settings.max_attempts)
    # The host runs one MPS daemon per GPU (mps/start_mps.sh); a GPU runner requires it (the
    # runners module leaves both out of a CPU runner's environment).
    PAGEFLEET_MPS     = "on"
    PAGEFLEET_MPS_DIR = "/run/pagefleet-mps"
  }
}

module "storage" {
  source = "./modules/storage"

  bucket_name          = local.bucket_name
  force_destroy        = var.force_destroy
  jobs_expiration_days = var.jobs_expiration_days
  access_log_bucket    = var.access_log_bucket
  kms_key_arn          = var.kms_key_arn

  deny_insecure_transport = var.s3_deny_insecure_transport
  allow_cloudwatch_alarms = var.create_alarms && (var.create_alarm_topic || length(var.alarm_emails) > 0)

  notifications = [
    for n in local.stack.notifications : {
      id            = n.id
      queue_arn     = module.queues.queue_arns[n.queue_role]
      events        = n.events
      filter_prefix = n.filter_prefix
      filter_suffix = n.filter_suffix
    }
  ]

  tags = var.tags
}

module "queues" {
  source = "./modules/queues"

  name_prefix          = var.name
  queues               = local.queues
  kms_key_arn          = module.storage.kms_key_arn
  notifying_bucket_arn = module.storage.bucket_arn_static
  notified_roles       = toset([for n in local.stack.notifications : n.queue_role])

  tags = var.tags
}

module "functions" {
  source = "./modules/functions"

  name_prefix                   = var.name
  package_path                  = local.package_path
  timeout_s                     = local.stack.handler_timeout_s
  batch_size                    = local.stack.batch_size
  bucket_name                   = module.storage.bucket_name
  bucket_arn                    = module.storage.bucket_arn
  queue_prefix                  = var.name
  queue_arns                    = module.queues.queue_arns
  dead_letter_queue_arns        = module.queues.dead_letter_queue_arns
  kms_key_arn                   = module.storage.kms_key_arn
  environment                   = local.handler_env
  job_event_bus_name            = aws_cloudwatch_event_bus.jobs.name
  webhook_url                   = var.job_webhook_url
  reserved_concurrency          = var.lambda_reserved_concurrency
  maximum_concurrency           = var.lambda_maximum_concurrency
  event_source_mapping_enabled  = var.event_source_mapping_enabled
  log_retention_days            = var.log_retention_days
  iam_role_path                 = var.iam_role_path
  iam_role_permissions_boundary = var.iam_role_permissions_boundary

  tags = var.tags
}

# One event per finished job (pagefleet/job_events.py: source "pagefleet", detail-type "Job
# finished", detail {bucket, key, record, markdown, status, pages, job_id, error,
# finished_at}). A bus of the deployment's own, so the completion functions may put events on
# it and on no other bus; subscribers add rules to it (modules/functions/README.md shows one
# that feeds an SQS queue). Its events are encrypted with an AWS-owned key: they carry keys and
# a status, no document content.
resource "aws_cloudwatch_event_bus" "jobs" {
  name = "${var.name}-jobs"

  tags = var.tags
}

module "runners" {
  source = "./modules/runners"

  create                                   = var.create_runners
  kind                                     = var.runner_kind
  create_service_linked_role               = var.create_ecs_service_linked_role
  name                                     = var.name
  vpc_id                                   = var.vpc_id
  subnet_ids                               = var.subnet_ids
  instance_types                           = var.gpu_instance_types
  ami_ssm_parameter                        = "/aws/service/ecs/optimized-ami/amazon-linux-2023/gpu/${var.gpu_ami_release}/image_id"
  on_demand_base_capacity                  = var.on_demand_base_capacity
  on_demand_percentage_above_base_capacity = var.on_demand_percentage_above_base_capacity
  max_instances                            = local.scaling.max_runners
  image_tag                                = var.runner_image_tag
  force_delete                             = var.ecr_force_delete
  task_memory_mb                           = var.runner_memory_mb
  vllm_image                               = var.vllm_image
  vllm_image_has_weights                   = var.vllm_image_has_weights
  vllm_gpu_memory_utilization              = var.vllm_gpu_memory_utilization
  vllm_gpu_type                            = var.vllm_gpu_type
  stop_timeout_s                           = ceil(local.settings.drain_timeout_s) + 15
  mps_pipe_directory                       = local.runner_env.PAGEFLEET_MPS_DIR
  environment                              = local.runner_env
  bucket_arn                               = module.storage.bucket_arn
  chunks_queue_arn                         = module.queues.queue_arns["chunks"]
  kms_key_arn                              = module.storage.kms_key_arn
  log_retention_days                       = var.log_retention_days
  iam_role_path                            = var.iam_role_path
  iam_role_permissions_boundary            = var.iam_role_permissions_boundary

  tags = local.tags
}

module "autoscaling" {
  source = "./modules/autoscaling"

  create               = var.create_runners && var.create_autoscaling
  name                 = var.name
  cluster_name         = coalesce(module.runners.cluster_name, var.name)
  service_name         = coalesce(module.runners.service_name, var.name)
  chunks_queue_name    = module.queues.queue_names["chunks"]
  min_runners          = local.scaling.min_runners
  max_runners          = local.scaling.max_runners
  acceptable_latency_s = local.scaling.acceptable_latency_s
  seconds_per_chunk    = local.scaling.seconds_per_chunk
  tracking_metric      = local.scaling.tracking_metric
  from_zero            = local.scaling.from_zero
  from_zero_cooldown_s = local.scaling.from_zero_cooldown_s
  scale_out_cooldown_s = local.scaling.scale_out_cooldown_s
  scale_in_cooldown_s  = local.scaling.scale_in_cooldown_s
  idle_minutes         = local.scaling.idle_minutes
  from_zero_gate       = local.scaling.from_zero_gate
  stall_minutes        = local.scaling.stall_minutes
  spread_lanes         = local.scaling.spread_tasks * local.workers_per_task
  stall_alarm_actions  = concat(var.alarm_actions, compact([module.alarms.topic_arn]))

  tags = var.tags
}

module "dashboard" {
  source = "./modules/dashboard"

  create                 = var.create_dashboard
  name                   = var.name
  region                 = var.region
  queue_names            = module.queues.queue_names
  function_names         = module.functions.lambda_function_names
  cluster_name           = var.create_runners ? module.runners.cluster_name : null
  service_name           = var.create_runners ? module.runners.service_name : null
  autoscaling_group_name = var.create_runners ? module.runners.autoscaling_group_name : null
  # Every alarm the modules make: the faults (with the stall stop), and the scaling alarms apart.
  alarm_arns                 = concat(module.alarms.alarm_arns, module.autoscaling.stall_alarm_arns)
  scaling_alarm_arns         = module.autoscaling.scaling_alarm_arns
  monthly_budget_usd         = var.monthly_budget_usd
  budget_emails              = coalesce(var.budget_emails, var.alarm_emails)
  cost_anomaly_threshold_usd = var.cost_anomaly_threshold_usd
  cost_anomaly_monitor_arn   = var.cost_anomaly_monitor_arn
  cost_anomaly_emails        = coalesce(var.cost_anomaly_emails, var.budget_emails, var.alarm_emails)

  tags = var.tags
}

module "alarms" {
  source = "./modules/alarms"

  create                       = var.create_alarms
  name                         = var.name
  dead_letter_queue_names      = module.queues.dead_letter_queue_names
  chunks_queue_name            = module.queues.queue_names["chunks"]
  handler_queue_names          = { for role in ["ingest", "completion"] : role => module.queues.queue_names[role] }
  oldest_chunk_age_threshold_s = var.oldest_chunk_age_threshold_s
  alarm_actions                = var.alarm_actions
  function_names               = module.functions.lambda_function_names
  create_ecs_alarms            = var.create_runners
  cluster_arn                  = module.runners.cluster_arn
  log_retention_days           = var.log_retention_days
  log_kms_key_arn              = module.storage.kms_key_arn
  create_topic                 = var.create_alarm_topic || length(var.alarm_emails) > 0
  topic_kms_key_arn            = module.storage.kms_key_arn
  email_addresses              = var.alarm_emails

  tags = var.tags
}
