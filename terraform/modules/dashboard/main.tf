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
    # The autoscaling module's step alarms are in ALARM whenever they act (chunks waiting with no
    # runner, the fleet idle): apart from the faults, so that red there is no fault.
    [for w in [
      {
        type       = "alarm", x = 0, y = 22, width = 24, height = 3
        properties = { title = "Scaling (in ALARM while it acts: starting runners, stopping idle ones)", alarms = var.scaling_alarm_arns }
      },
    ] : w if length(var.scaling_alarm_arns) > 0],
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

################################################################################
# Cost anomalies: AWS Cost Anomaly Detection, mailed once a day above a dollar impact
################################################################################

locals {
  create_anomaly_subscription = var.create && var.cost_anomaly_threshold_usd != null
  # A monitor of this deployment's tagged cost, unless one is brought. Not an AWS-services
  # (DIMENSIONAL SERVICE) monitor: an account may hold one only, many already do (AWS sets up
  # Default-Services-Monitor with Cost Explorer), and a second fails the apply; custom monitors
  # may number 500 (https://aws.amazon.com/aws-cost-management/aws-cost-anomaly-detection/faqs/).
  create_anomaly_monitor = local.create_anomaly_subscription && var.cost_anomaly_monitor_arn == null
}

resource "aws_ce_anomaly_monitor" "this" {
  count = local.create_anomaly_monitor ? 1 : 0

  name         = "${var.name}-cost"
  monitor_type = "CUSTOM"
  # A Cost Explorer expression over the cost allocation tag the budget filters on as well
  # (https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_Expression.html).
  monitor_specification = jsonencode({
    Tags = { Key = "Deployment", Values = [var.name], MatchOptions = ["EQUALS"] }
  })

  tags = var.tags
}

resource "aws_ce_anomaly_subscription" "this" {
  count = local.create_anomaly_subscription ? 1 : 0

  name = "${var.name}-cost-anomalies"
  # E-mail subscribers take DAILY or WEEKLY summaries; IMMEDIATE alerts go to SNS only
  # (https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_AnomalySubscription.html).
  frequency        = "DAILY"
  monitor_arn_list = [coalesce(var.cost_anomaly_monitor_arn, try(aws_ce_anomaly_monitor.this[0].arn, null))]

  dynamic "subscriber" {
    for_each = toset(var.cost_anomaly_emails)

    content {
      type    = "EMAIL"
      address = subscriber.value
    }
  }

  threshold_expression {
    dimension {
      key           = "ANOMALY_TOTAL_IMPACT_ABSOLUTE"
      match_options = ["GREATER_THAN_OR_EQUAL"]
      values        = [tostring(var.cost_anomaly_threshold_usd)]
    }
  }

  tags = var.tags
}
