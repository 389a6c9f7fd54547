output "target_backlog_per_task" {
  description = "Target value of the backlog-per-task policy: acceptable_latency_s / seconds_per_chunk."
  value       = local.target_backlog_per_task
}

output "appautoscaling_policy_arns" {
  description = "ARNs of the scaling policies: backlog, from_zero, to_zero."
  value = {
    backlog   = try(aws_appautoscaling_policy.backlog[0].arn, null)
    from_zero = try(aws_appautoscaling_policy.from_zero[0].arn, null)
    to_zero   = try(aws_appautoscaling_policy.to_zero[0].arn, null)
  }
}
