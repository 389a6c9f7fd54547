output "bucket_name" {
  description = "The bucket: upload to inbox/, results appear under outbox/ (PAGEFLEET_BUCKET)."
  value       = module.storage.bucket_name
}

output "region" {
  description = "Region of everything (PAGEFLEET_REGION)."
  value       = var.region
}

output "queue_prefix" {
  description = "Prefix of the queue names (PAGEFLEET_QUEUE_PREFIX)."
  value       = var.name
}

output "queue_urls" {
  description = "Queue URLs by role: ingest, chunks, completion."
  value       = module.queues.queue_urls
}

output "queue_names" {
  description = "Queue names by role: ingest, chunks, completion."
  value       = module.queues.queue_names
}

output "queue_arns" {
  description = "Queue ARNs by role."
  value       = module.queues.queue_arns
}

output "dead_letter_queue_urls" {
  description = "DLQ URLs by role of their source queue."
  value       = module.queues.dead_letter_queue_urls
}

output "dead_letter_queue_names" {
  description = "DLQ names by role of their source queue."
  value       = module.queues.dead_letter_queue_names
}

output "dead_letter_queue_arns" {
  description = "DLQ ARNs by role of their source queue (the source of a redrive: SQS's message move task)."
  value       = module.queues.dead_letter_queue_arns
}

output "kms_key_arn" {
  description = "KMS key of the bucket, queues and logs (readers of outbox/ need kms:Decrypt on it)."
  value       = module.storage.kms_key_arn
}

output "kms_key_policy_json" {
  description = "The key policy the deployment's key needs: its own key's, or, with kms_key_arn, what that key's policy must allow."
  value       = module.storage.kms_key_policy_json
}

output "lambda_function_names" {
  description = "Function names by role: splitter, completion, dead_letter, upload_dead_letter."
  value       = module.functions.lambda_function_names
}

output "lambda_role_arns" {
  description = "Execution role ARNs of the functions, by function role: splitter, completion, dead_letter, upload_dead_letter, completion_dead_letter."
  value       = module.functions.lambda_role_arns
}

output "runner_task_role_arn" {
  description = "ARN of the runner task role, what `python -m runner` runs under (null without create_runners)."
  value       = module.runners.task_role_arn
}

output "runner_execution_role_arn" {
  description = "ARN of the runner task execution role: image pulls and container logs (null without create_runners)."
  value       = module.runners.execution_role_arn
}

output "runner_instance_role_arn" {
  description = "ARN of the GPU instances' role (null without create_runners)."
  value       = module.runners.instance_role_arn
}

output "job_event_bus_name" {
  description = "EventBridge bus with one event per finished job (source pagefleet, detail-type \"Job finished\"): add rules to it to chain work on a job's end."
  value       = aws_cloudwatch_event_bus.jobs.name
}

output "job_event_bus_arn" {
  description = "ARN of the job event bus, for rules and policies of other accounts (the functions that end jobs get its name as PAGEFLEET_EVENT_BUS)."
  value       = aws_cloudwatch_event_bus.jobs.arn
}

output "ecr_repository_url" {
  description = "Where `make runner-image` pushes the runner image (docker/runner.Dockerfile)."
  value       = module.runners.ecr_repository_url
}

output "ecr_vllm_repository_url" {
  description = "Where `make vllm-image` mirrors the vLLM sidecar image."
  value       = module.runners.ecr_vllm_repository_url
}

output "runner_log_group_name" {
  description = "Log group of the runner and vLLM sidecar containers."
  value       = module.runners.log_group_name
}

output "alarm_topic_arn" {
  description = "SNS topic every alarm notifies (null unless create_alarm_topic or alarm_emails)."
  value       = module.alarms.topic_arn
}

output "ecs_event_log_group_name" {
  description = "Log group of the runner tasks that failed to start (the ECS events, with stoppedReason)."
  value       = module.alarms.ecs_event_log_group_name
}

output "cluster_name" {
  description = "ECS cluster of the runners."
  value       = module.runners.cluster_name
}

output "service_name" {
  description = "ECS service of the runners."
  value       = module.runners.service_name
}

output "submit_command" {
  description = "How to submit a PDF; the Markdown appears at outbox/<name>.md, the job record at outbox/<name>.json."
  value       = "aws s3 cp ./document.pdf s3://${module.storage.bucket_name}/inbox/document.pdf --region ${var.region}"
}

output "preflight" {
  description = "What `pagefleet preflight --stack` asks the account about: the variables that decide what the deploy needs of it."
  value = {
    name                                     = var.name
    region                                   = var.region
    create_runners                           = var.create_runners
    runner_kind                              = var.runner_kind
    gpu_instance_types                       = var.gpu_instance_types
    gpu_ami_release                          = var.gpu_ami_release
    max_runners                              = local.scaling.max_runners
    on_demand_base_capacity                  = var.on_demand_base_capacity
    on_demand_percentage_above_base_capacity = var.on_demand_percentage_above_base_capacity
    subnet_ids                               = var.subnet_ids
    runner_image_tag                         = var.runner_image_tag
    lambda_reserved_concurrency              = var.lambda_reserved_concurrency
    create_ecs_service_linked_role           = var.create_ecs_service_linked_role
  }
}

output "dashboard_url" {
  description = "The pipeline's CloudWatch dashboard in the console (null without create_dashboard)."
  value       = module.dashboard.dashboard_url
}

output "budget_name" {
  description = "The monthly cost budget (null without monthly_budget_usd)."
  value       = module.dashboard.budget_name
}

output "cost_anomaly_monitor_arn" {
  description = "The Cost Anomaly Detection monitor the anomaly summary reads (null without cost_anomaly_threshold_usd)."
  value       = module.dashboard.cost_anomaly_monitor_arn
}

output "cost_anomaly_subscription_arn" {
  description = "The daily cost anomaly summary's subscription (null without cost_anomaly_threshold_usd)."
  value       = module.dashboard.cost_anomaly_subscription_arn
}
