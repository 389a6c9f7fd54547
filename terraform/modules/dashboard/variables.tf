variable "create" {
  description = "Whether to create the dashboard (and the budget and the anomaly subscription, where their variables are set)."
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

variable "scaling_alarm_arns" {
  description = "The scaling policies' alarms (in ALARM while they act), shown apart from alarm_arns."
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

variable "cost_anomaly_threshold_usd" {
  description = "Mail a daily summary of the cost anomalies AWS Cost Anomaly Detection finds whose total impact reaches this many USD; null creates no subscription (and no monitor)."
  type        = number
  default     = null

  validation {
    condition     = var.cost_anomaly_threshold_usd == null || try(var.cost_anomaly_threshold_usd > 0, false)
    error_message = "cost_anomaly_threshold_usd is a dollar impact above zero (e.g. 50), or null for no anomaly alerts."
  }
}

variable "cost_anomaly_monitor_arn" {
  description = "An existing Cost Anomaly Detection monitor to subscribe to (e.g. the account's Default-Services-Monitor: `aws ce get-anomaly-monitors`) instead of creating one of the resources tagged Deployment = name. Needed in an AWS Organizations member account, where only the management account may create tag monitors."
  type        = string
  default     = null

  validation {
    condition     = var.cost_anomaly_monitor_arn == null || can(regex("^arn:aws[a-z-]*:ce::[0-9]{12}:anomalymonitor/", var.cost_anomaly_monitor_arn))
    error_message = "cost_anomaly_monitor_arn is a monitor's ARN, arn:aws:ce::<account>:anomalymonitor/<id> (aws ce get-anomaly-monitors --query 'AnomalyMonitors[].MonitorArn')."
  }
}

variable "cost_anomaly_emails" {
  description = "Addresses mailed the daily anomaly summary (at most 10, Cost Anomaly Detection's limit per subscription)."
  type        = list(string)
  default     = []

  validation {
    condition     = var.cost_anomaly_threshold_usd == null ? true : length(var.cost_anomaly_emails) > 0 && length(var.cost_anomaly_emails) <= 10
    error_message = "cost_anomaly_threshold_usd needs 1 to 10 cost_anomaly_emails (or alarm_emails at the root): Cost Anomaly Detection mails at most 10 addresses a subscription, and one that mails no one guards nothing."
  }
}

variable "tags" {
  description = "Tags for the budget and the anomaly monitor and subscription."
  type        = map(string)
  default     = {}
}
