################################################################################
# One page to watch the pipeline: work waiting, fleet, GPUs, functions, jobs ending, alarms
################################################################################

locals {
  runners     = var.cluster_name != null && var.service_name != null
  queue_roles = ["ingest", "chunks", "completion"]

  queue_metric = { for role in local.queue_roles : role => { QueueName = var.queue_names[role] } }

  # The metrics pagefleet's code publishes (namespace pagefleet): jobs by how they ended, from
  # the functions that end jobs (handlers/clients.py announcer), and the runners' GPU samples
  # (runner/supervisor.py).
  job_services = ["splitter", "completion"]
  job_statuses = ["done", "partial", "failed"]

  widgets = concat(
    [
      {
        type = "metric", x = 0, y = 0, width = 12, height = 6
        properties = {
          title   = "Messages waiting", region = var.region, view = "timeSeries", stat = "Maximum", period = 60
          metrics = [for role in local.queue_roles : ["AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", var.queue_names[role], { label = role }]]
        }
      },
      {
        type = "metric", x = 12, y = 0, width = 12, height = 6
        properties = {
          title   = "Age of the oldest message (s)", region = var.region, view = "timeSeries", stat = "Maximum", period = 60
          metrics = [for role in local.queue_roles : ["AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName", var.queue_names[role], { label = role }]]
        }
      },
      {
        type = "metric", x = 0, y = 12, width = 12, height = 6
        properties = {
          title   = "Jobs ended, by status", region = var.region, view = "timeSeries", stat = "Sum", period = 300
          metrics = [for pair in setproduct(local.job_statuses, local.job_services) : ["pagefleet", "Jobs_${pair[0]}", "service", pair[1], { label = "${pair[0]} (${pair[1]})" }]]
        }
      },
      {
        type = "metric", x = 12, y = 12, width = 12, height = 6
        properties = {
          title = "Function errors and throttles", region = var.region, view = "timeSeries", stat = "Sum", period = 300
          metrics = concat(
            [for role, fn in var.function_names : ["AWS/Lambda", "Errors", "FunctionName", fn, { label = "${role} errors" }]],
            [for role, fn in var.function_names : ["AWS/Lambda", "Throttles", "FunctionName", fn, { label = "${role} throttles" }]],
          )
        }
      },
    ],
    # A for with a condition, as the two arms of a conditional must have one type.
    [for w in [
      {
        type = "metric", x = 0, y = 6, width = 8, height = 6
        properties = {
          title = "Runner tasks", region = var.region, view = "timeSeries", stat = "Average", period = 60
          metrics = [
            ["ECS/ContainerInsights", "RunningTaskCount", "ClusterName", var.cluster_name, "ServiceName", var.service_name, { label = "running" }],
            ["ECS/ContainerInsights", "DesiredTaskCount", "ClusterName", var.cluster_name, "ServiceName", var.service_name, { label = "desired" }],
          ]
        }
      },
      {
        type = "metric", x = 8, y = 6, width = 8, height = 6
        properties = {
          title = "GPU instances", region = var.region, view = "timeSeries", stat = "Average", period = 60
          metrics = [
            ["AWS/AutoScaling", "GroupInServiceInstances", "AutoScalingGroupName", var.autoscaling_group_name, { label = "in service" }],
            ["AWS/AutoScaling", "GroupPendingInstances", "AutoScalingGroupName", var.autoscaling_group_name, { label = "pending" }],
            ["AWS/AutoScaling", "GroupDesiredCapacity", "AutoScalingGroupName", var.autoscaling_group_name, { label = "desired" }],
          ]
        }
      },
      {
        type = "metric", x = 16, y = 6, width = 8, height = 6
        properties = {
          title   = "GPU utilisation (%, the runners' average)", region = var.region, view = "timeSeries", stat = "Average", period = 60
          metrics = [["pagefleet", "GpuUtilization", "Service", "runner", "Gpu", "0", { label = "GPU 0" }]]
          yAxis   = { left = { min = 0, max = 100 } }
        }
      },
    ] : w if local.runners && (w.properties.title != "GPU instances" || var.autoscaling_group_name != null)],
    [for w in [
      {
        type       = "alarm", x = 0, y = 18, width = 24, height = 4
        properties = { title = "Alarms", alarms = var.alarm_arns }
      },
    ] : w if length(var.alarm_arns) > 0],
  )
}

resource "aws_cloudwatch_dashboard" "this" {
  count = var.create ? 1 : 0

  dashboard_name = var.name
  dashboard_body = jsonencode({ widgets = local.widgets })
}

################################################################################
# Budget: the month's cost of this deployment's tagged resources
################################################################################

resource "aws_budgets_budget" "this" {
  count = var.create && var.monthly_budget_usd != null ? 1 : 0

  name         = "${var.name}-monthly"
  budget_type  = "COST"
  limit_amount = tostring(var.monthly_budget_usd)
  limit_unit   = "USD"
  time_unit    = "MONTHLY"

  cost_filter {
    name   = "TagKeyValue"
    values = [format("user:Deployment$%s", var.name)] # Budgets spells a tag filter key$value
  }

  dynamic "notification" {
    for_each = [
      { type = "ACTUAL", threshold = 80 },
      { type = "ACTUAL", threshold = 100 },
      { type = "FORECASTED", threshold = 100 },
    ]

    content {
      comparison_operator        = "GREATER_THAN"
      threshold                  = notification.value.threshold
      threshold_type             = "PERCENTAGE"
      notification_type          = notification.value.type
      subscriber_email_addresses = var.budget_emails
    }
  }

  tags = var.tags
}
