locals {
  # Chunks outstanding per task that clear within the acceptable latency.
  target_backlog_per_task = var.acceptable_latency_s / var.seconds_per_chunk

  queue_dimensions   = { QueueName = var.chunks_queue_name }
  service_dimensions = { ClusterName = var.cluster_name, ServiceName = var.service_name }

  # The tracked metric math, as pagefleet/scaling.py names it (TRACKING_EXPRESSIONS). The
  # outstanding kinds count at least one chunk, so target tracking's scale-in never sets zero
  # at the first quiet minute; zero is the idle policy's, after idle_minutes.
  tracking_expression = {
    visible_per_running     = "visible / running"
    outstanding_per_running = "IF(visible + in_flight < 1, 1, visible + in_flight) / running"
    outstanding_per_desired = "IF(visible + in_flight < 1, 1, visible + in_flight) / desired"
  }[var.tracking_metric]

  # Only the metrics the expression reads (an unused query is an error in target tracking).
  tracking_metrics = {
    for id, m in {
      visible   = { namespace = "AWS/SQS", metric_name = "ApproximateNumberOfMessagesVisible", dimensions = local.queue_dimensions, label = "Chunks waiting" }
      in_flight = { namespace = "AWS/SQS", metric_name = "ApproximateNumberOfMessagesNotVisible", dimensions = local.queue_dimensions, label = "Chunks being converted" }
      running   = { namespace = "ECS/ContainerInsights", metric_name = "RunningTaskCount", dimensions = local.service_dimensions, label = "Running runner tasks" }
      desired   = { namespace = "ECS/ContainerInsights", metric_name = "DesiredTaskCount", dimensions = local.service_dimensions, label = "Desired runner tasks (running or starting)" }
    } : id => m if strcontains(local.tracking_expression, id)
  }

  # Leaving zero. exact_backlog: ceil(visible / target) tasks, set (not added) on every
  # evaluation while no task runs, so a cold start of minutes cannot pile tasks up; the
  # alarm's metric is the visible backlog (threshold 1), and for an integer backlog v,
  # ceil(v / T) = n exactly when v - 1 lies in [floor((n-1)T), floor(nT)) (pagefleet/scaling.py
  # from_zero_steps; the tests compare the two). change_plus_one: the first release's +1 per
  # cooldown, kept only to compare.
  # At most 20 steps: Application Auto Scaling's default quota of step adjustments per policy
  # (pagefleet/scaling.py MAX_STEP_ADJUSTMENTS); past 20 tasks, target tracking scales further.
  from_zero_exact = var.from_zero == "exact_backlog"
  from_zero_last  = min(var.max_runners, 20)
  from_zero_steps = local.from_zero_exact ? [
    for n in range(1, local.from_zero_last + 1) : {
      lower      = floor((n - 1) * local.target_backlog_per_task)
      upper      = n == local.from_zero_last ? null : floor(n * local.target_backlog_per_task)
      adjustment = n
    }
  ] : [{ lower = 0, upper = null, adjustment = 1 }]
  # The gate (pagefleet/scaling.py from_zero_expression; a test compares them): no running
  # task as Container Insights counts it, which a service at zero may not publish at all, or
  # nothing in flight as the chunks queue counts it, which SQS publishes while the queue holds
  # a message. With a stall limit, a backlog older than it leaves zero no more.
  stall_s = var.stall_minutes == null ? null : var.stall_minutes * 60
  from_zero_gate = join(" AND ", compact([
    var.from_zero_gate == "no_running_task" ? "FILL(running, 0) == 0" : "in_flight < 1",
    var.from_zero_gate == "nothing_in_flight" && local.stall_s != null ? "age < ${coalesce(local.stall_s, 60) - 60}" : "",
  ]))
  from_zero_expression = local.from_zero_exact ? "IF(${local.from_zero_gate}, visible, 0)" : "IF(visible > 0 AND ${local.from_zero_gate}, 1, 0)"

  # Chunks waiting and none in flight, for stall_minutes in a row: GPU instances up for
  # nothing (never registered, sidecar never healthy) or none to be had.
  stall_expression = "IF(visible >= 1 AND in_flight < 1, 1, 0)"

  queue_metrics = {
    visible   = { namespace = "AWS/SQS", metric_name = "ApproximateNumberOfMessagesVisible", dimensions = local.queue_dimensions }
    in_flight = { namespace = "AWS/SQS", metric_name = "ApproximateNumberOfMessagesNotVisible", dimensions = local.queue_dimensions }
    age       = { namespace = "AWS/SQS", metric_name = "ApproximateAgeOfOldestMessage", dimensions = local.queue_dimensions }
    running   = { namespace = "ECS/ContainerInsights", metric_name = "RunningTaskCount", dimensions = local.service_dimensions }
  }
  # Only the metrics each alarm's expression reads.
  from_zero_metrics = { for id, m in local.queue_metrics : id => m if can(regex("\\b${id}\\b", local.from_zero_expression)) }
  stall_metrics     = { for id, m in local.queue_metrics : id => m if can(regex("\\b${id}\\b", local.stall_expression)) }
}

resource "aws_appautoscaling_target" "this" {
  count = var.create ? 1 : 0

  service_namespace  = "ecs"
  resource_id        = "service/${var.cluster_name}/${var.service_name}"
  scalable_dimension = "ecs:service:DesiredCount"
  min_capacity       = var.min_runners
  max_capacity       = var.max_runners

  lifecycle {
    precondition {
      # Below one chunk per task the steps from zero would be empty intervals.
      condition     = local.target_backlog_per_task >= 1
      error_message = "acceptable_latency_s / seconds_per_chunk must be at least one chunk per task."
    }

    precondition {
      # A small document becomes up to spread_lanes chunks: within one task's target backlog,
      # leaving zero starts exactly one task for it (pagefleet/scaling.py splitter_lanes).
      condition     = var.spread_lanes <= local.target_backlog_per_task
      error_message = "spread_lanes (${var.spread_lanes}: spread_tasks x workers_per_gpu) must be at most the backlog one task takes (${local.target_backlog_per_task}: acceptable_latency_s / seconds_per_chunk), or one small document starts several tasks from zero."
    }
  }
}

################################################################################
# Target tracking: chunks outstanding per task = target backlog per task
################################################################################

resource "aws_appautoscaling_policy" "backlog" {
  count = var.create ? 1 : 0

  name               = "${var.name}-backlog-per-task"
  policy_type        = "TargetTrackingScaling"
  service_namespace  = aws_appautoscaling_target.this[0].service_namespace
  resource_id        = aws_appautoscaling_target.this[0].resource_id
  scalable_dimension = aws_appautoscaling_target.this[0].scalable_dimension

  target_tracking_scaling_policy_configuration {
    target_value       = local.target_backlog_per_task
    scale_out_cooldown = var.scale_out_cooldown_s
    scale_in_cooldown  = var.scale_in_cooldown_s

    customized_metric_specification {
      dynamic "metrics" {
        for_each = local.tracking_metrics

        content {
          id          = metrics.key
          label       = metrics.value.label
          return_data = false

          metric_stat {
            stat = "Average"

            metric {
              namespace   = metrics.value.namespace
              metric_name = metrics.value.metric_name

              dynamic "dimensions" {
                for_each = metrics.value.dimensions

                content {
                  name  = dimensions.key
                  value = dimensions.value
                }
              }
            }
          }
        }
      }

      # With no task (running or desired) there is no value: target tracking cannot leave
      # zero, the step policy below does.
      metrics {
        id          = "backlog_per_task"
        label       = "Chunks outstanding per task"
        expression  = local.tracking_expression
        return_data = true
      }
    }
  }
}

################################################################################
# Step from zero: chunks visible while no task runs
################################################################################

resource "aws_appautoscaling_policy" "from_zero" {
  count = var.create ? 1 : 0

  name               = "${var.name}-start-from-zero"
  policy_type        = "StepScaling"
  service_namespace  = aws_appautoscaling_target.this[0].service_namespace
  resource_id        = aws_appautoscaling_target.this[0].resource_id
  scalable_dimension = aws_appautoscaling_target.this[0].scalable_dimension

  step_scaling_policy_configuration {
    adjustment_type         = local.from_zero_exact ? "ExactCapacity" : "ChangeInCapacity"
    cooldown                = var.from_zero_cooldown_s
    metric_aggregation_type = "Maximum"

    dynamic "step_adjustment" {
      for_each = local.from_zero_steps

      content {
        metric_interval_lower_bound = step_adjustment.value.lower
        metric_interval_upper_bound = step_adjustment.value.upper
        scaling_adjustment          = step_adjustment.value.adjustment
      }
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "from_zero" {
  count = var.create ? 1 : 0

  alarm_name          = "${var.name}-chunks-waiting-no-runner"
  alarm_description   = local.from_zero_exact ? "Chunks are visible and no runner converts: set as many tasks as the backlog needs (ExactCapacity, so repeating it while tasks start adds none)." : "Chunks are visible (> 0) and no runner converts: add a task."
  comparison_operator = "GreaterThanOrEqualToThreshold"
  threshold           = 1
  evaluation_periods  = 1
  treat_missing_data  = "notBreaching"
  alarm_actions       = [aws_appautoscaling_policy.from_zero[0].arn]

  dynamic "metric_query" {
    for_each = local.from_zero_metrics

    content {
      id          = metric_query.key
      return_data = false

      metric {
        namespace   = metric_query.value.namespace
        metric_name = metric_query.value.metric_name
        dimensions  = metric_query.value.dimensions
        period      = 60
        stat        = "Maximum"
      }
    }
  }

  metric_query {
    id          = "waiting_without_runner"
    label       = "Chunks visible while no runner converts"
    expression  = local.from_zero_expression
    return_data = true
  }

  tags = var.tags
}

################################################################################
# Scale in to zero: nothing visible and nothing in flight for idle_minutes
################################################################################

resource "aws_appautoscaling_policy" "to_zero" {
  count = var.create ? 1 : 0

  name               = "${var.name}-stop-when-idle"
  policy_type        = "StepScaling"
  service_namespace  = aws_appautoscaling_target.this[0].service_namespace
  resource_id        = aws_appautoscaling_target.this[0].resource_id
  scalable_dimension = aws_appautoscaling_target.this[0].scalable_dimension

  step_scaling_policy_configuration {
    adjustment_type         = "ExactCapacity"
    cooldown                = var.scale_in_cooldown_s
    metric_aggregation_type = "Maximum"

    step_adjustment {
      metric_interval_upper_bound = 0
      scaling_adjustment          = 0
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "idle" {
  count = var.create ? 1 : 0

  alarm_name          = "${var.name}-chunks-idle"
  alarm_description   = "No chunk visible or in flight for ${var.idle_minutes} minutes: stop every runner."
  comparison_operator = "LessThanOrEqualToThreshold"
  threshold           = 0
  evaluation_periods  = var.idle_minutes
  datapoints_to_alarm = var.idle_minutes
  treat_missing_data  = "missing"
  alarm_actions       = [aws_appautoscaling_policy.to_zero[0].arn]

  metric_query {
    id          = "visible"
    return_data = false

    metric {
      namespace   = "AWS/SQS"
      metric_name = "ApproximateNumberOfMessagesVisible"
      dimensions  = local.queue_dimensions
      period      = 60
      stat        = "Maximum"
    }
  }

  metric_query {
    id          = "in_flight"
    return_data = false

    metric {
      namespace   = "AWS/SQS"
      metric_name = "ApproximateNumberOfMessagesNotVisible"
      dimensions  = local.queue_dimensions
      period      = 60
      stat        = "Maximum"
    }
  }

  metric_query {
    id          = "outstanding"
    label       = "Chunks visible or in flight"
    expression  = "visible + in_flight"
    return_data = true
  }

  tags = var.tags
}

################################################################################
# Stalled: chunks waiting, none in flight, for stall_minutes: stop every runner
################################################################################

# Instances that never register, a sidecar that never turns healthy, capacity refused: tasks
# are desired, GPUs may be billed, nothing converts. Stopping the tasks lets the capacity
# provider release the instances; the from-zero alarm does not start them again while the
# oldest chunk is older than stall_minutes, so a person fixes the cause and restarts (the
# module README). The chunks wait, kept 14 days.
resource "aws_appautoscaling_policy" "stalled" {
  count = var.create && var.stall_minutes != null ? 1 : 0

  name               = "${var.name}-stop-when-stalled"
  policy_type        = "StepScaling"
  service_namespace  = aws_appautoscaling_target.this[0].service_namespace
  resource_id        = aws_appautoscaling_target.this[0].resource_id
  scalable_dimension = aws_appautoscaling_target.this[0].scalable_dimension

  step_scaling_policy_configuration {
    adjustment_type         = "ExactCapacity"
    cooldown                = var.scale_in_cooldown_s
    metric_aggregation_type = "Maximum"

    step_adjustment {
      metric_interval_lower_bound = 0
      scaling_adjustment          = 0
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "stalled" {
  count = var.create && var.stall_minutes != null ? 1 : 0

  alarm_name          = "${var.name}-runners-stalled"
  alarm_description   = "Chunks have waited ${coalesce(var.stall_minutes, 0)} minutes in a row with none in flight: runners are up for nothing or cannot start. Every runner task is stopped and none restarts on its own; fix the cause (the ECS events log, the capacity provider), then start the service (terraform/modules/autoscaling/README.md)."
  comparison_operator = "GreaterThanOrEqualToThreshold"
  threshold           = 1
  evaluation_periods  = coalesce(var.stall_minutes, 1)
  datapoints_to_alarm = coalesce(var.stall_minutes, 1)
  treat_missing_data  = "notBreaching"
  alarm_actions       = concat([aws_appautoscaling_policy.stalled[0].arn], var.stall_alarm_actions)
  ok_actions          = var.stall_alarm_actions

  dynamic "metric_query" {
    for_each = local.stall_metrics

    content {
      id          = metric_query.key
      return_data = false

      metric {
        namespace   = metric_query.value.namespace
        metric_name = metric_query.value.metric_name
        dimensions  = metric_query.value.dimensions
        period      = 60
        stat        = "Maximum"
      }
    }
  }

  metric_query {
    id          = "stalled"
    label       = "Chunks waiting, none in flight, the oldest past the stall limit"
    expression  = local.stall_expression
    return_data = true
  }

  tags = var.tags
}
