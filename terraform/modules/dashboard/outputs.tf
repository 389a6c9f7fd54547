output "dashboard_name" {
  description = "Name of the CloudWatch dashboard (null when none)."
  value       = try(aws_cloudwatch_dashboard.this[0].dashboard_name, null)
}

output "dashboard_url" {
  description = "Where the dashboard opens in the console (null when none)."
  value       = var.create ? "https://${var.region}.console.aws.amazon.com/cloudwatch/home?region=${var.region}#dashboards/dashboard/${var.name}" : null
}

output "dashboard_body" {
  description = "The dashboard's body (JSON), as CloudWatch gets it."
  value       = var.create ? aws_cloudwatch_dashboard.this[0].dashboard_body : null
}

output "budget_name" {
  description = "Name of the monthly budget (null when none)."
  value       = try(aws_budgets_budget.this[0].name, null)
}

output "alarms_shown" {
  description = "Every alarm the dashboard shows: alarm_arns, then scaling_alarm_arns."
  value       = concat(var.alarm_arns, var.scaling_alarm_arns)
}

output "cost_anomaly_monitor_arn" {
  description = "The monitor the anomaly subscription reads: cost_anomaly_monitor_arn, or the one created (null without cost_anomaly_threshold_usd)."
  value       = local.create_anomaly_subscription ? coalesce(var.cost_anomaly_monitor_arn, try(aws_ce_anomaly_monitor.this[0].arn, null)) : null
}

output "cost_anomaly_subscription_arn" {
  description = "ARN of the anomaly subscription (null without cost_anomaly_threshold_usd)."
  value       = try(aws_ce_anomaly_subscription.this[0].arn, null)
}
