locals {
  # Backlog per task that drains within the acceptable latency.
  target_backlog_per_task = var.acceptable_latency_s / var.seconds_per_chunk

  queue_dimensions   = { QueueName = var.chunks_queue_name }
  service_dimensions = { ClusterName = var.cluster_name, ServiceName = var.service_name }
}

resource "aws_appautoscaling_target" "this" {
  count = var.create ? 1 : 0

  service_namespace  = "ecs"
  resource_id        = "service/${var.cluster_name}/${var.service_name}"
  scalable_dimension = "ecs:service:DesiredCount"
  min_capacity       = 0
  max_capacity       = var.max_runners
}

################################################################################
# Target tracking: chunks visible / running tasks = target backlog per task
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
      metrics {
        id          = "visible"
        label       = "Chunks waiting"
        return_data = false

        metric_stat {
          stat = "Average"

          metric {
            namespace   = "AWS/SQS"
            metric_name = "ApproximateNumberOfMessagesVisible"

            dimensions {
              name  = "QueueName"
              value = var.chunks_queue_name
            }
          }
        }
      }

      metrics {
        id          = "running"
        label       = "Running runner tasks"
        return_data = false

        metric_stat {
          stat = "Average"

          metric {
            namespace   = "ECS/ContainerInsights"
            metric_name = "RunningTaskCount"

            dimensions {
              name  = "ClusterName"
              value = var.cluster_name
            }

            dimensions {
              name  = "ServiceName"
              value = var.service_name
            }
          }
        }
      }

      # With no task running there is no value: target tracking cannot leave zero, the
      # step policy below does.
      metrics {
        id          = "backlog_per_task"
        label       = "Chunks waiting per running task"
        expression  = "visible / running"
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
    adjustment_type         = "ChangeInCapacity"
    cooldown                = var.scale_out_cooldown_s
    metric_aggregation_type = "Maximum"

    step_adjustment {
      metric_interval_lower_bound = 0
      scaling_adjustment          = 1
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "from_zero" {
  count = var.create ? 1 : 0

  alarm_name          = "${var.name}-chunks-waiting-no-runner"
  alarm_description   = "Chunks are visible (> 0) and no runner task runs: start one. Limited to zero tasks so it never fights the target tracking policy."
  comparison_operator = "GreaterThanOrEqualToThreshold"
  threshold           = 1
  evaluation_periods  = 1
  treat_missing_data  = "notBreaching"
  alarm_actions       = [aws_appautoscaling_policy.from_zero[0].arn]

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
    id          = "running"
    return_data = false

    metric {
      namespace   = "ECS/ContainerInsights"
      metric_name = "RunningTaskCount"
      dimensions  = local.service_dimensions
      period      = 60
      stat        = "Maximum"
    }
  }

  metric_query {
    id    = "waiting_without_runner"
    label = "Chunks visible and no runner"
    # A service at zero may publish no RunningTaskCount at all: missing counts as zero.
    expression  = "IF(visible > 0 AND FILL(running, 0) == 0, 1, 0)"
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
