output "lambda_function_names" {
  description = "Function names by role: splitter, completion, dead_letter, upload_dead_letter, completion_dead_letter."
  value       = { for k, f in aws_lambda_function.this : k => f.function_name }
}

output "lambda_function_arns" {
  description = "Function ARNs by role."
  value       = { for k, f in aws_lambda_function.this : k => f.arn }
}

output "lambda_role_arns" {
  description = "Execution role ARNs by function role."
  value       = { for k, r in aws_iam_role.this : k => r.arn }
}

output "lambda_log_group_names" {
  description = "Log group names by function role."
  value       = { for k, g in aws_cloudwatch_log_group.this : k => g.name }
}

output "event_source_mapping_uuids" {
  description = "SQS event source mapping IDs by function role."
  value       = { for k, m in aws_lambda_event_source_mapping.this : k => m.uuid }
}
