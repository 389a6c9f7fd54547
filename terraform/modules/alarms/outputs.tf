output "dead_letter_alarm_arns" {
  description = "DLQ alarm ARNs by role of the source queue."
  value       = { for k, a in aws_cloudwatch_metric_alarm.dead_letter : k => a.arn }
}

output "oldest_chunk_alarm_arn" {
  description = "ARN of the oldest-chunk-age alarm."
  value       = try(aws_cloudwatch_metric_alarm.oldest_message["chunks"].arn, null)
}

output "lambda_error_alarm_arns" {
  description = "Lambda errors alarm ARNs by function role."
  value       = { for k, a in aws_cloudwatch_metric_alarm.lambda_errors : k => a.arn }
}

output "lambda_throttle_alarm_arns" {
  description = "Lambda throttles alarm ARNs by function role."
  value       = { for k, a in aws_cloudwatch_metric_alarm.lambda_throttles : k => a.arn }
}

output "task_start_failure_alarm_arn" {
  description = "ARN of the runner-tasks-failing-to-start alarm."
  value       = try(aws_cloudwatch_metric_alarm.task_start_failures[0].arn, null)
}

output "ecs_event_log_group_name" {
  description = "Log group holding the runner task-failure events (with stoppedReason)."
  value       = try(aws_cloudwatch_log_group.ecs_events[0].name, null)
}

output "topic_arn" {
  description = "ARN of the alarm topic (null when none is created)."
  value       = try(aws_sns_topic.this[0].arn, null)
}

output "alarm_arns" {
  description = "Every alarm of the module (for a dashboard's alarm widget)."
  value = concat(
    [for a in aws_cloudwatch_metric_alarm.dead_letter : a.arn],
    [for a in aws_cloudwatch_metric_alarm.oldest_message : a.arn],
    [for a in aws_cloudwatch_metric_alarm.lambda_errors : a.arn],
    [for a in aws_cloudwatch_metric_alarm.lambda_throttles : a.arn],
    aws_cloudwatch_metric_alarm.task_start_failures[*].arn,
  )
}
