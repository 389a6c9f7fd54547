variable "create" {
  description = "Whether to create the dashboard (and the budget, where monthly_budget_usd is set)."
  type        = bool
  default     = true
}

variable "name" {
  description = "Name of the dashboard and the budget; the deployment's name."
  type        = string
}

variable "region" {
  description = "Region of the metrics the dashboard shows."
  type        = string
}

variable "queue_names" {
  description = "Queue names by role: ingest, chunks, completion."
  type        = map(string)
}

variable "function_names" {
  description = "Lambda function names by role."
  type        = map(string)
}

variable "cluster_name" {
  description = "ECS cluster of the runners; null without runners."
  type        = string
  default     = null
}

variable "service_name" {
  description = "ECS service of the runners; null without runners."
  type        = string
  default     = null
}

variable "autoscaling_group_name" {
  description = "Auto Scaling group of the GPU instances; null without runners."
  type        = string
  default     = null
}

variable "alarm_arns" {
  description = "Alarms the dashboard shows the state of."
  type        = list(string)
  default     = []
}

variable "monthly_budget_usd" {
  description = "Monthly cost budget in USD of the resources tagged Deployment = name; null creates none. AWS Budgets sees the tag once it is activated as a cost allocation tag (Billing console, Cost allocation tags)."
  type        = number
  default     = null
}

variable "budget_emails" {
  description = "Addresses told when the month's actual cost passes 80% and 100% of the budget, and the forecast passes 100%."
  type        = list(string)
  default     = []

  validation {
    condition     = var.monthly_budget_usd == null || length(var.budget_emails) > 0
    error_message = "monthly_budget_usd needs budget_emails (or alarm_emails at the root): a budget that tells no one guards nothing."
  }
}

variable "tags" {
  description = "Tags for the budget."
  type        = map(string)
  default     = {}
}
