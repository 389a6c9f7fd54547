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
