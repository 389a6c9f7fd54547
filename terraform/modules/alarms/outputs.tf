output "dead_letter_alarm_arns" {
  description = "DLQ alarm ARNs by role of the source queue."
  value       = { for k, a in aws_cloudwatch_metric_alarm.dead_letter : k => a.arn }
}

output "oldest_chunk_alarm_arn" {
  description = "ARN of the oldest-chunk-age alarm."
  value       = try(aws_cloudwatch_metric_alarm.oldest_chunk[0].arn, null)
}
