# The autoscaling module: backlog-per-task target tracking (metric math), the step from zero
# and the scale-in to zero.

mock_provider "aws" {
  override_during = plan
}

variables {
  name                 = "pf"
  cluster_name         = "pf"
  service_name         = "pf"
  chunks_queue_name    = "pf-chunks"
  max_runners          = 6
  acceptable_latency_s = 300
  seconds_per_chunk    = 6
}

run "scaling" {
  command = plan

  module {
    source = "./modules/autoscaling"
  }

  assert {
    condition     = aws_appautoscaling_target.this[0].min_capacity == 0 && aws_appautoscaling_target.this[0].max_capacity == 6
    error_message = "the service scales between zero and max_runners"
  }

  assert {
    condition     = aws_appautoscaling_target.this[0].resource_id == "service/pf/pf" && aws_appautoscaling_target.this[0].scalable_dimension == "ecs:service:DesiredCount"
    error_message = "the target is the runner service's desired count"
  }

  assert {
    condition     = aws_appautoscaling_policy.backlog[0].target_tracking_scaling_policy_configuration[0].target_value == 50
    error_message = "target backlog per task = acceptable latency / seconds per chunk"
  }

  assert {
    condition = jsonencode({
      for m in aws_appautoscaling_policy.backlog[0].target_tracking_scaling_policy_configuration[0].customized_metric_specification[0].metrics :
      m.id => [m.expression, m.return_data, try(one(one(m.metric_stat).metric).namespace, null), try(one(one(m.metric_stat).metric).metric_name, null),
      try({ for d in one(one(m.metric_stat).metric).dimensions : d.name => d.value }, null)]
      }) == jsonencode({
      visible          = [null, false, "AWS/SQS", "ApproximateNumberOfMessagesVisible", { QueueName = "pf-chunks" }]
      running          = [null, false, "ECS/ContainerInsights", "RunningTaskCount", { ClusterName = "pf", ServiceName = "pf" }]
      backlog_per_task = ["visible / running", true, null, null, null]
    })
    error_message = "the tracked metric is visible chunks / running tasks"
  }

  assert {
    condition = (
      one(aws_appautoscaling_policy.from_zero[0].step_scaling_policy_configuration).adjustment_type == "ChangeInCapacity" &&
      one(one(aws_appautoscaling_policy.from_zero[0].step_scaling_policy_configuration).step_adjustment).scaling_adjustment == 1
    )
    error_message = "the step from zero adds a task"
  }

  assert {
    condition = (
      [for q in aws_cloudwatch_metric_alarm.from_zero[0].metric_query : q.expression if q.return_data] == ["IF(visible > 0 AND FILL(running, 0) == 0, 1, 0)"] &&
      aws_cloudwatch_metric_alarm.from_zero[0].threshold == 1 && aws_cloudwatch_metric_alarm.from_zero[0].comparison_operator == "GreaterThanOrEqualToThreshold"
    )
    error_message = "the step from zero fires on chunks visible while no task runs"
  }

  assert {
    condition = (
      one(aws_appautoscaling_policy.to_zero[0].step_scaling_policy_configuration).adjustment_type == "ExactCapacity" &&
      one(one(aws_appautoscaling_policy.to_zero[0].step_scaling_policy_configuration).step_adjustment).scaling_adjustment == 0 &&
      [for q in aws_cloudwatch_metric_alarm.idle[0].metric_query : q.expression if q.return_data] == ["visible + in_flight"] &&
      aws_cloudwatch_metric_alarm.idle[0].comparison_operator == "LessThanOrEqualToThreshold" && aws_cloudwatch_metric_alarm.idle[0].threshold == 0
    )
    error_message = "idle (nothing visible or in flight) scales to zero"
  }
}

run "create_false" {
  command = plan

  module {
    source = "./modules/autoscaling"
  }

  variables {
    create = false
  }

  assert {
    condition     = length(aws_appautoscaling_target.this) == 0 && length(aws_appautoscaling_policy.backlog) == 0
    error_message = "create = false plans nothing"
  }
}
