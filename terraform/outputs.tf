output "bucket_name" {
  description = "The bucket: upload to inbox/, results appear under outbox/ (PAGEFLEET_BUCKET)."
  value       = module.storage.bucket_name
}

output "queue_prefix" {
  description = "Prefix of the queue names (PAGEFLEET_QUEUE_PREFIX)."
  value       = var.name
}

output "queue_urls" {
  description = "Queue URLs by role: ingest, chunks, completion."
  value       = module.queues.queue_urls
}

output "dead_letter_queue_urls" {
  description = "DLQ URLs by role of their source queue."
  value       = module.queues.dead_letter_queue_urls
}

output "kms_key_arn" {
  description = "KMS key of the bucket, queues and logs (readers of outbox/ need kms:Decrypt on it)."
  value       = module.storage.kms_key_arn
}

output "lambda_function_names" {
  description = "Function names by role: splitter, completion, dead_letter."
  value       = module.functions.lambda_function_names
}

output "ecr_repository_url" {
  description = "Where to push the runner image (docker/runner.Dockerfile)."
  value       = module.runners.ecr_repository_url
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
