output "ecr_repository_url" {
  description = "URL of the runner image repository (`docker push <url>:<tag>`)."
  value       = try(aws_ecr_repository.this[0].repository_url, null)
}

output "ecr_repository_arn" {
  description = "ARN of the runner image repository."
  value       = try(aws_ecr_repository.this[0].arn, null)
}

output "ecr_vllm_repository_url" {
  description = "URL of the repository holding the mirrored vLLM sidecar image (`make vllm-image`)."
  value       = try(aws_ecr_repository.vllm[0].repository_url, null)
}

output "cluster_name" {
  description = "Name of the ECS cluster."
  value       = try(aws_ecs_cluster.this[0].name, null)
}

output "cluster_arn" {
  description = "ARN of the ECS cluster (the task-failure event rules match on it)."
  value       = try(aws_ecs_cluster.this[0].arn, null)
}

output "service_name" {
  description = "Name of the runner ECS service."
  value       = try(aws_ecs_service.this[0].name, null)
}

output "service_arn" {
  description = "ARN of the runner ECS service (a new one when kind changes: the service is replaced)."
  value       = try(aws_ecs_service.this[0].id, null)
}

output "task_definition_arn" {
  description = "ARN of the runner task definition."
  value       = one(concat(aws_ecs_task_definition.this[*].arn, aws_ecs_task_definition.cpu[*].arn))
}

output "autoscaling_group_name" {
  description = "Name of the GPU instances' auto scaling group (null with kind cpu: Fargate has none)."
  value       = try(aws_autoscaling_group.this[0].name, null)
}

output "task_role_arn" {
  description = "ARN of the runner task role."
  value       = try(aws_iam_role.task[0].arn, null)
}

output "execution_role_arn" {
  description = "ARN of the runner task execution role (image pulls, container logs)."
  value       = try(aws_iam_role.execution[0].arn, null)
}

output "instance_role_arn" {
  description = "ARN of the GPU instances' role (the ECS agent, Session Manager)."
  value       = try(aws_iam_role.instance[0].arn, null)
}

output "log_group_name" {
  description = "Log group of the runner and sidecar containers."
  value       = try(aws_cloudwatch_log_group.this[0].name, null)
}

output "container_definitions" {
  description = "The task's container definitions (JSON): the vLLM sidecar and the runner (kind gpu), or the runner alone (kind cpu)."
  value       = one(concat(aws_ecs_task_definition.this[*].container_definitions, aws_ecs_task_definition.cpu[*].container_definitions))
}

output "vllm_gpu_type" {
  description = "surya's GPU type the sidecar and the runner's request concurrency are sized for (PAGEFLEET_MARKER_VLLM_GPU_TYPE)."
  value       = local.vllm_gpu_type
}

output "launch_tags" {
  description = "The tags runner instances and their volumes launch with, by resource type."
  value       = local.gpu ? { for t in aws_launch_template.this[0].tag_specifications : t.resource_type => t.tags } : {}
}

output "ami_ssm_parameter" {
  description = "The SSM parameter whose AMI the instances launch from."
  value       = var.ami_ssm_parameter
}

output "kind" {
  description = "What the runners run on: gpu (marker-pdf, GPU instances) or cpu (the text-layer converter, Fargate)."
  value       = var.kind
}

output "cpu_task" {
  description = "The CPU runner task's size (cpu_task.json): vCPU units, memory, workers, each conversion's memory budget, the CPU seconds of one chunk."
  value       = local.cpu_task
}
