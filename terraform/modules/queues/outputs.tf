output "queue_arns" {
  description = "Source queue ARNs by role (each queue is created with its policy, so S3 can validate it as a notification target)."
  value       = { for role, q in aws_sqs_queue.this : role => q.arn }
}

output "queue_urls" {
  description = "Source queue URLs by role."
  value       = { for role, q in aws_sqs_queue.this : role => q.url }
}

output "queue_names" {
  description = "Source queue names by role."
  value       = { for role, q in aws_sqs_queue.this : role => q.name }
}

output "dead_letter_queue_arns" {
  description = "DLQ ARNs by role of their source queue."
  value       = { for role, q in aws_sqs_queue.dlq : role => q.arn }
}

output "dead_letter_queue_urls" {
  description = "DLQ URLs by role of their source queue."
  value       = { for role, q in aws_sqs_queue.dlq : role => q.url }
}

output "dead_letter_queue_names" {
  description = "DLQ names by role of their source queue."
  value       = { for role, q in aws_sqs_queue.dlq : role => q.name }
}
