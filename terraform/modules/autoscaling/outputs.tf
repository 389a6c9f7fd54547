output "target_backlog_per_task" {
  description = "Target value of the backlog-per-task policy: acceptable_latency_s / seconds_per_chunk (chunks outstanding per task)."
  value       = local.target_backlog_per_task
}

output "tracking_expression" {
  description = "Metric math target tracking holds at target_backlog_per_task."
  value       = local.tracking_expression
}

output "from_zero_steps" {
  description = "Steps of the policy that leaves zero (bounds relative to the alarm threshold of 1 visible chunk)."
  value       = local.from_zero_steps
}

output "appautoscaling_policy_arns" {
  description = "ARNs of the scaling policies: backlog, from_zero, to_zero."
  value = {
    backlog   = try(aws_appautoscaling_policy.backlog[0].arn, null)
    from_zero = try(aws_appautoscaling_policy.from_zero[0].arn, null)
    to_zero   = try(aws_appautoscaling_policy.to_zero[0].arn, null)
    stalled   = try(aws_appautoscaling_policy.stalled[0].arn, null)
  }
}

output "from_zero_expression" {
  description = "Metric math of the from-zero alarm (the visible backlog while nothing converts)."
  value       = local.from_zero_expression
}

output "stall_alarm_arn" {
  description = "ARN of the alarm that stops the runners when chunks wait with none in flight for stall_minutes (null without one)."
  value       = try(aws_cloudwatch_metric_alarm.stalled[0].arn, null)
}

output "stall_alarm_arns" {
  description = "The stall alarm's ARN in a list (empty without one), for a dashboard's alarm widget."
  value       = aws_cloudwatch_metric_alarm.stalled[*].arn
}

output "scaling_alarm_arns" {
  description = "ARNs of the alarms that drive the step policies (leaving zero, stopping when idle): in ALARM whenever they act."
  value       = concat(aws_cloudwatch_metric_alarm.from_zero[*].arn, aws_cloudwatch_metric_alarm.idle[*].arn)
}

output "scaling_target" {
  description = "What is scaled on what: the service (Application Auto Scaling's resource ID) and the queue whose backlog its policies and alarms read (null without create)."
  value = var.create ? {
    resource_id = aws_appautoscaling_target.this[0].resource_id
    queue_name  = local.queue_dimensions.QueueName
  } : null
}
